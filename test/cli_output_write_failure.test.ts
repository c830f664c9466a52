/**
 * "Errors go to stderr ... with a non-zero exit (1 failed, 2 called wrongly)" (docs/cli.md) and
 * "With `--json` a command prints exactly one JSON document on stdout" (CONTRACT §1). When stdout cannot
 * be written (a full disk behind `> key.json`, here /dev/full, which fails every write with ENOSPC), the
 * command did not print its answer: it must not report success. `key create` shows the key "once, at
 * creation" (README): a lost key with exit 0 leaves a script believing it has a key file.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { CLI_MAIN, runCliJson, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();

/** The CLI with its stdout on /dev/full (as `certkeeper … > /dev/full`). */
async function runToFullDisk(args: string[], env: Record<string, string>) {
  const child = Bun.spawn(["sh", "-c", 'exec "$0" "$@" > /dev/full', process.execPath, CLI_MAIN, ...args], {
    env: { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("CERTKEEPER_"))), ...env, NO_COLOR: "1", CERTKEEPER_LOG_LEVEL: "error" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return { code, stderr };
}

test.skipIf(!existsSync("/dev/full"))("key create --json whose answer cannot be written exits non-zero and says so on stderr", async () => {
  const ws = workspace();
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", "you@acme.example", "--role", "owner"], { env: ws.env });
  const result = await runToFullDisk(["key", "create", "--user", user.id, "--name", "laptop", "--json"], ws.env);
  expect(result.code).not.toBe(0);
  expect(result.stderr).toMatch(/\S/);
});

test.skipIf(!existsSync("/dev/full"))("org list --json and --version whose output cannot be written exit non-zero", async () => {
  const ws = workspace();
  await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
  expect((await runToFullDisk(["org", "list", "--json"], ws.env)).code).not.toBe(0);
  expect((await runToFullDisk(["--version"], ws.env)).code).not.toBe(0);
});
