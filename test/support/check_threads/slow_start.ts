/**
 * A check thread that takes 1.4 s to start, its modules' loading included (as a new thread may on a
 * loaded machine), then checks as the real thread does, for test/check_threads.test.ts: a time limit
 * counted from its start would end 1.4 s late.
 */
import { parentPort } from "node:worker_threads";
import { preciseNow } from "../../../core/net/mod.ts";
import { connectEndpoints } from "../../../core/tls/mod.ts";

const START_MS = 1_400;
const port = parentPort!;

// A thread's clock starts when it is created: what its modules took to load counts in the 1.4 s.
await new Promise((resolve) => setTimeout(resolve, Math.max(0, START_MS - performance.now())));
port.on("message", async ([id, request]) => {
  port.postMessage([id, await connectEndpoints(request)]);
});
port.postMessage(["ready", preciseNow()]);
