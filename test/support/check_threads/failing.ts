/** A check thread that says it is ready, then fails outright on its first check (an uncaught error), for test/check_threads.test.ts. */
import { parentPort } from "node:worker_threads";

parentPort!.on("message", () => {
  throw new Error("the thread broke");
});
parentPort!.postMessage(["ready", performance.timeOrigin + performance.now()]);
