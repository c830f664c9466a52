/**
 * docs/cli.md: "errors go to stderr, naming the flag or variable to change, with a non-zero exit
 * (1 failed, 2 called wrongly …)". A value outside a flag's allowed set is a wrong call, as
 * `--mode foo` and `--certificate-limit abc` are: exit 2, naming the flag and its values.
 */
import { describe, expect, test } from "bun:test";
import { orgWithUser, runCli, runCliJson, workspacesRemovedAfterAll } from "./support/cli.ts";

const workspace = workspacesRemovedAfterAll();

describe("CLI flags with a fixed set of values", () => {
  test("org create --plan gold: a usage error (exit 2) naming --plan", async () => {
    const ws = workspace();
    const result = await runCli(["org", "create", "--name", "Gold", "--plan", "gold", "--json"], { env: ws.env });
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('--plan must be free, pro or enterprise; got "gold"');
    expect(result.code).toBe(2);
  });

  test("org update --plan gold: a usage error (exit 2) naming --plan", async () => {
    const ws = workspace();
    const org = await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
    const result = await runCli(["org", "update", "--id", org.id, "--plan", "gold", "--json"], { env: ws.env });
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("--plan");
    expect(result.code).toBe(2);
  });

  test("user create --role boss: a usage error (exit 2) naming --role", async () => {
    const ws = workspace();
    const { org } = await orgWithUser(ws.env);
    const result = await runCli(["user", "create", "--org", org.id, "--email", "boss@acme.test", "--role", "boss", "--json"], { env: ws.env });
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('--role must be owner, admin or member; got "boss"');
    expect(result.code).toBe(2);
  });

  test("for comparison, --mode foo already is one (exit 2, naming --mode)", async () => {
    const ws = workspace();
    const { org } = await orgWithUser(ws.env);
    const result = await runCli(["certificate", "list", "--org", org.id, "--mode", "foo"], { env: ws.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--mode");
  });
});
