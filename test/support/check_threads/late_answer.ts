/**
 * A check thread that answers each check 300 ms after its time limit (a loaded machine's thread, late
 * but alive), for test/check_threads_failures_and_defaults.test.ts: within the default 5 s grace it must be
 * taken as alive, not ended as stuck.
 */
import { parentPort } from "node:worker_threads";
import { preciseNow } from "../../../core/net/mod.ts";
import { connectEndpoints } from "../../../core/tls/mod.ts";

const LATE_MS = 300;
const port = parentPort!;

port.on("message", async ([id, request]) => {
  const retrievals = await connectEndpoints(request);
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, request.dueAt + LATE_MS - preciseNow())));
  port.postMessage([id, retrievals]);
});
port.postMessage(["ready", preciseNow()]);
