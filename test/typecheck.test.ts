/**
 * The whole project typechecks (`tsc --noEmit` over tsconfig.json: core, adapters, tests, benchmarks).
 * Bun runs TypeScript without checking it, so without this a type error reaches main unseen.
 *
 * tsc keeps what it learned in a build-info file (`--incremental`) in the system's temporary folder,
 * one per checkout: the next run checks again only the files that changed and those that depend on
 * them (about 2.7 s of CPU instead of 9 on 2 cores), and reports every error of the files it does not
 * check again from that file. A first run, or one after tsconfig.json or TypeScript changed, checks all.
 */
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const BUILD_INFO = join(tmpdir(), `certkeeper-tsc-${createHash("sha256").update(ROOT).digest("hex").slice(0, 16)}.tsbuildinfo`);

test("tsc --noEmit finds no type error", async () => {
  const tsc = Bun.spawn([join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", ROOT, "--incremental", "--tsBuildInfoFile", BUILD_INFO], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited]);
  // The errors themselves on failure, not only the exit code.
  expect({ code, errors: `${out}${err}`.trim().split("\n").slice(0, 20) }).toEqual({ code: 0, errors: [""] });
}, 120_000);
