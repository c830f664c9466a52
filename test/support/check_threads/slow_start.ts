/**
 * A check thread that takes 800 ms to start (as a new thread may on a loaded machine), then checks as the
 * real thread does, for test/check_threads.test.ts: a time limit counted from its start would end 800 ms late.
 */
import { parentPort } from "node:worker_threads";
import { preciseNow } from "../../../core/net/mod.ts";
import { connectEndpoints } from "../../../core/tls/mod.ts";

const START_MS = 800;
const port = parentPort!;

await new Promise((resolve) => setTimeout(resolve, START_MS));
port.on("message", async ([id, request]) => {
  port.postMessage([id, await connectEndpoints(request)]);
});
port.postMessage(["ready", preciseNow()]);
