/**
 * A write of an import's outcomes that the database refuses (SQLITE_BUSY, a full disk, a dropped
 * sqld connection) while other items of the page are still being retrieved ends that page, to be
 * taken up again; it never ends the program that embeds certkeeper (Bun ends a process on an
 * unhandled rejection) nor writes a stack trace outside the log.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

test("a settle that fails once while retrievals are in flight does not end the process", () => {
  const child = Bun.spawnSync([process.execPath, join(import.meta.dir, "support/imports_write_failure_host.ts")], {
    cwd: join(import.meta.dir, ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = child.stdout.toString();
  const err = child.stderr.toString();
  expect({ exitCode: child.exitCode, alive: out.includes("still alive"), stderr: err.split("\n").filter((l) => /error/i.test(l)).slice(0, 2) }).toEqual({
    exitCode: 0,
    alive: true,
    stderr: [],
  });
}, 60_000);
