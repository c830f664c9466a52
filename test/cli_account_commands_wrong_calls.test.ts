/**
 * The account commands' wrong calls and their sentences (docs/cli.md): an empty required flag is a
 * usage error naming it; `org update` with nothing to change is a usage error; the free plan's
 * sentence counts its one watch in the singular.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectUsageError, runCli, runCliJson, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("account commands", () => {
  test("org create --name '' is a usage error (exit 2) naming --name", async () => {
    const ws = workspace();
    const result = await runCli(["org", "create", "--name", ""], { env: ws.env, cwd: ws.dir });
    expectUsageError(result, /--name is required/);
  });

  test("org update with nothing to change is a usage error (exit 2) naming what it needs", async () => {
    const ws = workspace();
    const org = await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env, cwd: ws.dir });
    const result = await runCli(["org", "update", "--id", org.id], { env: ws.env, cwd: ws.dir });
    expectUsageError(result, /needs something to change/);
  });

  test("org create's sentence: the free plan's limits, its one watch in the singular", async () => {
    const ws = workspace();
    const result = await runCli(["org", "create", "--name", "Acme"], { env: ws.env, cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Plan free: 25 certificates, 5 channels, 60 requests per minute per key, 1 watch.");
  });

  test("org create --if-missing when several organizations have the name: refused (exit 1) naming how many, nothing created", async () => {
    const ws = workspace();
    await runCliJson(["org", "create", "--name", "Twin"], { env: ws.env, cwd: ws.dir });
    await runCliJson(["org", "create", "--name", "Twin"], { env: ws.env, cwd: ws.dir });
    const result = await runCli(["org", "create", "--name", "Twin", "--if-missing"], { env: ws.env, cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('2 organizations are named "Twin"');
    expect(await runCliJson(["org", "list"], { env: ws.env, cwd: ws.dir })).toHaveLength(2);
  });
});
