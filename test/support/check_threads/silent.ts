/** A check thread that takes every check and never answers (a stuck thread), for test/check_threads.test.ts. */
import { parentPort } from "node:worker_threads";

parentPort!.on("message", () => {});
