/**
 * Another process holding a database file's write lock, as one upgrading a large database (or in a
 * long write) does, until released: for tests of what a process starting meanwhile does.
 */

export interface WriteLockHolder {
  /** Commits and ends the holder. */
  release(): Promise<void>;
  /** Ends it at once (cleanup). */
  kill(): Promise<void>;
}

/** Starts a process that takes the write lock of the SQLite file at `path`; resolves once it holds it. */
export async function holdWriteLock(path: string): Promise<WriteLockHolder> {
  const holder = Bun.spawn(
    [
      process.execPath,
      "-e",
      `const { Database } = require("bun:sqlite"); const db = new Database(${JSON.stringify(path)}); db.exec("PRAGMA busy_timeout = 5000; BEGIN IMMEDIATE; CREATE TABLE IF NOT EXISTS held (x INTEGER);"); console.log("held"); process.stdin.on("data", () => { db.exec("COMMIT"); db.close(); process.exit(0); });`,
    ],
    { stdin: "pipe", stdout: "pipe", stderr: "inherit" },
  );
  const reader = holder.stdout.getReader();
  const said = new TextDecoder().decode((await reader.read()).value);
  reader.releaseLock();
  if (!said.includes("held")) throw new Error(`the lock holder said ${JSON.stringify(said)}`);
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      holder.stdin.write("release\n");
      holder.stdin.flush();
      await holder.exited;
    },
    async kill() {
      holder.kill("SIGKILL");
      await holder.exited;
    },
  };
}
