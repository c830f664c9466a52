/**
 * The whole project typechecks (`tsc --noEmit` over tsconfig.json: core, adapters, tests, benchmarks).
 * Bun runs TypeScript without checking it, so without this a type error reaches main unseen.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");

test("tsc --noEmit finds no type error", async () => {
  const tsc = Bun.spawn([join(ROOT, "node_modules", ".bin", "tsc"), "--noEmit", "-p", ROOT], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(tsc.stdout).text(), new Response(tsc.stderr).text(), tsc.exited]);
  // The errors themselves on failure, not only the exit code.
  expect({ code, errors: `${out}${err}`.trim().split("\n").slice(0, 20) }).toEqual({ code: 0, errors: [""] });
}, 120_000);
