/**
 * A check thread whose clock reads 60 s ahead of the event loop's (as after a wall-clock step between
 * the two threads' starts), for test/check_threads.test.ts: it reports that clock when ready and reads
 * each request's time limit on it, then checks as the real thread does.
 */
import { parentPort } from "node:worker_threads";
import { connectEndpoints } from "../../../core/tls/mod.ts";

const AHEAD_MS = 60_000;
const port = parentPort!;

port.on("message", async ([id, request]) => {
  port.postMessage([id, await connectEndpoints({ ...request, dueAt: request.dueAt - AHEAD_MS })]);
});
port.postMessage(["ready", performance.timeOrigin + performance.now() + AHEAD_MS]);
