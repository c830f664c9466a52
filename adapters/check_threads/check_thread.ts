/**
 * A check thread: opens a check's connections, speaks STARTTLS where asked, and reads each address's
 * chain (core's connectEndpoints), then hands the chains back. What the chains mean is judged on the
 * event loop, which keeps the store, the caches and the budget.
 */
import { parentPort } from "node:worker_threads";
import { connectEndpoints } from "../../core/tls/mod.ts";
import type { ConnectAnswer, ConnectMessage } from "./protocol.ts";

const port = parentPort!;

port.on("message", async ([id, request]: ConnectMessage) => {
  let answer: ConnectAnswer;
  try {
    answer = [id, await connectEndpoints(request)];
  } catch (error) {
    answer = [id, null, error instanceof Error ? error.message : String(error)];
  }
  port.postMessage(answer);
});
