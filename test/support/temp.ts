/**
 * A temporary directory removed when the test that made it ends, or, made outside a test (at a file's
 * top level, in a helper run at import), when the file's tests end: a run leaves nothing in /tmp.
 */
import { afterAll, onTestFinished } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function temporaryDirectory(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const remove = () => rmSync(dir, { recursive: true, force: true });
  try {
    onTestFinished(remove);
  } catch {
    afterAll(remove);
  }
  return dir;
}
