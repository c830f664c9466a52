/**
 * `certkeeper serve` and the CLI on one database at the same time, as real processes (CONTRACT §1,
 * §3, §10): keys made and revoked by the CLI take effect in the running server, and SIGTERM exits 0.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { generateApiKey } from "../core/auth/api_key.ts";
import { ISO, orgWithUser, runCliJson, startServe, workspacesRemovedAfterAll } from "./support/cli.ts";

// describe.concurrent tests do not inherit the preload's default timeout; CLI processes need more than 5 s under load.
setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("serve and the CLI on one database at the same time", () => {
  test("a key made by the CLI works at once, is refused from the request after its revocation, and SIGTERM exits 0", async () => {
    const ws = workspace();
    // The first process migrates the schema; the server then starts on an existing database.
    const { org, user } = await orgWithUser(ws.env, "owner");
    const serve = await startServe({ env: ws.env, cwd: ws.dir });
    try {
      const created = await runCliJson(["key", "create", "--user", user.id, "--name", "while serving"], { env: ws.env });
      const get = (authorization?: string) =>
        fetch(`${serve.url}/v1/certificates/cert_xxxxxxxxxxxxxxxxxxxx`, { headers: authorization ? { authorization } : {} }).then(
          async (r) => ({ status: r.status, body: await r.json() }),
        );
      const errorBody = (code: string) => ({ error: { code, message: expect.any(String) } });

      expect(await get(`Bearer ${created.key}`)).toEqual({ status: 404, body: errorBody("certificate_not_found") });
      expect(await get(`bearer ${created.key}`)).toEqual({ status: 404, body: errorBody("certificate_not_found") });

      expect(await runCliJson(["key", "revoke", "--id", created.id], { env: ws.env })).toEqual({ id: created.id, revoked: true });
      expect(await get(`Bearer ${created.key}`)).toEqual({ status: 401, body: errorBody("expired_api_key") });

      const [unknown, malformed, missing, otherScheme] = await Promise.all([
        get(`Bearer ${generateApiKey("live").key}`),
        get("Bearer ck_live_short"),
        get(),
        get(`Basic ${btoa("a:b")}`),
      ]);
      expect(unknown).toEqual({ status: 401, body: errorBody("invalid_api_key") });
      expect(malformed).toEqual({ status: 401, body: errorBody("invalid_api_key") });
      expect(missing).toEqual({ status: 401, body: errorBody("missing_api_key") });
      expect(otherScheme).toEqual({ status: 401, body: errorBody("missing_api_key") });

      // The key list, read while the server runs, shows the revocation.
      const [listed] = await runCliJson(["key", "list", "--org", org.id], { env: ws.env });
      expect(listed).toMatchObject({ id: created.id, revokedAt: expect.stringMatching(ISO) });
    } finally {
      const started = Date.now();
      const code = await serve.stop("SIGTERM", 5000);
      const { stdout, stderr } = serve.output();
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(Date.now() - started).toBeLessThan(5000);
      // Logs never carry a key (CONTRACT §10).
      expect(stdout).not.toContain("ck_live_");
    }
  });
});
