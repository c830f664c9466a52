/** A CT reading thread that dies at its first request (for the fallback test). */
import { parentPort } from "node:worker_threads";

parentPort!.on("message", () => process.exit(3));
