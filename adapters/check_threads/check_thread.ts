/**
 * A check thread: opens a check's connections, speaks STARTTLS where asked, and reads each address's
 * chain (core's connectEndpoints), then hands the chains back. What the chains mean is judged on the
 * event loop, which keeps the store, the caches and the budget.
 */
import { parentPort } from "node:worker_threads";
import { preciseNow } from "../../core/net/mod.ts";
import { connectEndpoints } from "../../core/tls/mod.ts";
import type { ConnectMessage, ThreadMessage } from "./protocol.ts";

const port = parentPort!;

port.on("message", async ([id, request]: ConnectMessage) => {
  let answer: ThreadMessage;
  try {
    answer = [id, await connectEndpoints(request)];
  } catch (error) {
    answer = [id, null, error instanceof Error ? error.message : String(error)];
  }
  port.postMessage(answer);
});

// Each thread's clock starts at its own origin: the event loop sets requests' time limits by this.
port.postMessage(["ready", preciseNow()] satisfies ThreadMessage);
