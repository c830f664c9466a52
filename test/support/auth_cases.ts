/** The authentication cases every route shares (CONTRACT §3), registered once per route. */
import { describe, expect, test } from "bun:test";
import { expectError, type Harness, type TestResponse } from "./harness.ts";

type Send = (headers: Record<string, string>) => Promise<TestResponse>;

export function describeAuthCases(route: string, harness: () => Harness, send: (h: Harness, headers: Record<string, string>) => Promise<TestResponse>) {
  const call: Send = (headers) => send(harness(), headers);
  describe(`${route}: authentication`, () => {
    test("no Authorization header: 401 missing_api_key", async () => {
      expectError(await call({}), 401, "missing_api_key");
    });
    test("an empty header, another scheme or Bearer without a key: 401 missing_api_key", async () => {
      for (const authorization of ["", "Basic dXNlcjpwYXNz", "Bearer", "Bearer   "]) {
        expectError(await call({ authorization }), 401, "missing_api_key");
      }
    });
    test("a key sent without its scheme: 401 missing_api_key, saying the scheme is missing", async () => {
      const response = await call({ authorization: harness().keys.owner.key });
      expectError(response, 401, "missing_api_key");
      expect(response.body.error.message).toContain("holds a key without its scheme");
    });
    test("a malformed key, a bad checksum or an unknown key: 401 invalid_api_key", async () => {
      const valid = harness().keys.owner.key;
      const badChecksum = valid.slice(0, -1) + (valid.endsWith("A") ? "B" : "A");
      const unknown = "ck_live_" + "a".repeat(38);
      for (const key of ["hello", "ck_live_short", "ck_prod_" + valid.slice(8), badChecksum, unknown, `${valid} extra`]) {
        expectError(await call({ authorization: `Bearer ${key}` }), 401, "invalid_api_key");
      }
    });
    test("the scheme is case-insensitive", async () => {
      const response = await call({ authorization: `bEaReR ${harness().keys.owner.key}` });
      expect(response.status).not.toBe(401);
    });
    test("a revoked key: 401 expired_api_key from the very next request", async () => {
      const h = harness();
      const key = await h.makeKey("owner");
      expect((await call({ authorization: `Bearer ${key.key}` })).status).not.toBe(401);
      await h.core.services.admin.revokeApiKey(key.id);
      expectError(await call({ authorization: `Bearer ${key.key}` }), 401, "expired_api_key");
    });
  });
}
