/**
 * What the account commands change is logged as the server logs it (`API key created`, `API key
 * revoked`, `password set`: the key id and user id, never the key or the password), on stderr, so a
 * key made at a shell is in an audit trail too; stdout stays the command's answer (one JSON document
 * with --json).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { orgWithUser, runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("what the CLI changes is logged", () => {
  test("key create and key revoke log `API key created` / `API key revoked` with the key id, never the key", async () => {
    const ws = workspace();
    const env = { ...ws.env, CERTKEEPER_LOG_FORMAT: "json" };
    const { user } = await orgWithUser(ws.env, "owner");

    const created = await runCli(["key", "create", "--user", user.id, "--name", "laptop", "--json"], { env });
    expect(created.code).toBe(0);
    const key = JSON.parse(created.stdout); // stdout stays exactly one JSON document
    expect(created.stderr).toContain("API key created");
    expect(created.stderr).toContain(key.id);
    expect(created.stderr).not.toContain(key.key);

    const revoked = await runCli(["key", "revoke", "--id", key.id, "--json"], { env });
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ id: key.id, revoked: true });
    expect(revoked.stderr).toContain("API key revoked");
    expect(revoked.stderr).toContain(key.id);
    // Revoked again: the same answer, and nothing logged, since nothing changed.
    const again = await runCli(["key", "revoke", "--id", key.id, "--json"], { env });
    expect({ code: again.code, answer: JSON.parse(again.stdout), stderr: again.stderr }).toEqual({ code: 0, answer: { id: key.id, revoked: true }, stderr: "" });
  });

  test("user set-password logs `password set` with the user id, never the password", async () => {
    const ws = workspace();
    const env = { ...ws.env, CERTKEEPER_LOG_FORMAT: "json" };
    const { user } = await orgWithUser(ws.env, "owner");
    const password = "A-long-enough-passw0rd";

    const result = await runCli(["user", "set-password", "--email", user.email, "--password", "-", "--json"], { env, stdin: password });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ id: user.id, canSignIn: true });
    expect(result.stderr).toContain("password set");
    expect(result.stderr).toContain(user.id);
    expect(result.stderr).not.toContain(password);
  });
});
