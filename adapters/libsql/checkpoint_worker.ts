/**
 * The background checkpointer's thread (see checkpointer.ts): its own connection to the database file,
 * copying committed WAL pages back into the database every `everyMs`, so the process's main thread,
 * which runs every statement, never does. A PASSIVE checkpoint waits for nobody: it copies what no
 * reader still needs and leaves the rest for the next round.
 */
import Database from "libsql";
import { parentPort, workerData } from "node:worker_threads";

const { path, everyMs, busyTimeoutMs } = workerData as { path: string; everyMs: number; busyTimeoutMs: number };
const db = new Database(path, { timeout: busyTimeoutMs });
const checkpoint = db.prepare("PRAGMA wal_checkpoint(PASSIVE)");
checkpoint.raw(true);

const timer = setInterval(() => {
  try {
    const [busy, frames, copied] = (checkpoint.all() as [number, number, number][])[0]!;
    parentPort!.postMessage({ busy, frames, copied });
  } catch (error) {
    // A busy or locked database is tried again next round; the main connection's own checkpoint
    // (at a higher threshold) stays as the backstop.
    parentPort!.postMessage({ error: String((error as Error).message ?? error) });
  }
}, everyMs);

parentPort!.on("message", (message) => {
  if (message !== "stop") return;
  clearInterval(timer);
  db.close();
  parentPort!.postMessage("stopped");
});
