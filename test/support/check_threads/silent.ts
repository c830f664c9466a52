/** A check thread that says it is ready, takes every check and never answers (a stuck thread), for test/check_threads.test.ts. */
import { parentPort } from "node:worker_threads";

parentPort!.on("message", () => {});
parentPort!.postMessage(["ready", performance.timeOrigin + performance.now()]);
