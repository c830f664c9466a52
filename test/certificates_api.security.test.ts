/** Hostile callers: other organizations' data, the other mode, private-network targets, members, secrets at rest. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let tls: TlsTestServer;
const domain = `secure.${TEST_DOMAIN}`;
let certificateId: string;

beforeAll(async () => {
  h = await createHarness({ store: "libsql" });
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  certificateId = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: tls.port } }), 201).id;
});
afterAll(async () => {
  await h.close();
  await tls.close();
});

describe("another organization's certificate is answered exactly as a missing one", () => {
  test("get, patch, check and delete: 404 certificate_not_found, and nothing changes", async () => {
    const otherOrg = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", otherOrg.id);
    const missingId = "cert_00000000000000000000";
    const attempts: Array<[string, string, unknown?]> = [
      ["GET", ""],
      ["PATCH", "", { name: "pwned" }],
      ["POST", "/check"],
      ["DELETE", ""],
    ];
    for (const [method, suffix, body] of attempts) {
      const theirs = await h.request(method, `/v1/certificates/${certificateId}${suffix}`, { key: stranger.key, body });
      const missing = await h.request(method, `/v1/certificates/${missingId}${suffix}`, { key: stranger.key, body });
      expectError(theirs, 404, "certificate_not_found");
      expect(theirs.body.error.message.replace(certificateId, "ID")).toBe(missing.body.error.message.replace(missingId, "ID"));
    }
    expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200).name).toBe(domain);
    expect(expectData(await h.request("GET", "/v1/certificates", { key: stranger.key }), 200)).toEqual([]);
  });

  test("the same domain can be monitored by two organizations", async () => {
    const otherOrg = await h.core.services.admin.createOrganization({ name: "Neighbour" });
    const neighbour = await h.makeKey("admin", "live", otherOrg.id);
    expectData(await h.request("POST", "/v1/certificates", { key: neighbour.key, body: { domain, port: tls.port } }), 201);
  });
});

describe("live and test keys see separate data", () => {
  test("what a live key created is invisible to a test key of the same organization, and the reverse", async () => {
    expectError(await h.request("GET", `/v1/certificates/${certificateId}`, { key: h.keys.test.key }), 404, "certificate_not_found");
    expect(expectData(await h.request("GET", "/v1/certificates", { key: h.keys.test.key }), 200)).toEqual([]);
    const testCert = expectData(await h.request("POST", "/v1/certificates", { key: h.keys.test.key, body: { domain, port: tls.port } }), 201);
    expectError(await h.request("GET", `/v1/certificates/${testCert.id}`), 404, "certificate_not_found");
    const live = expectData(await h.request("GET", "/v1/certificates"), 200).map((c: any) => c.id);
    expect(live).toEqual([certificateId]);
  });
});

describe("member keys only read", () => {
  test("GET works; every write is 403 permission_denied and changes nothing", async () => {
    const member = h.keys.member.key;
    expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`, { key: member }), 200).id).toBe(certificateId);
    expectData(await h.request("GET", "/v1/certificates", { key: member }), 200);
    expectError(await h.request("POST", "/v1/certificates", { key: member, body: { domain: `m.${TEST_DOMAIN}`, port: tls.port } }), 403, "permission_denied");
    expectError(await h.request("PATCH", `/v1/certificates/${certificateId}`, { key: member, body: { name: "x" } }), 403, "permission_denied");
    expectError(await h.request("POST", `/v1/certificates/${certificateId}/check`, { key: member }), 403, "permission_denied");
    expectError(await h.request("DELETE", `/v1/certificates/${certificateId}`, { key: member }), 403, "permission_denied");
    expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200).name).toBe(domain);
  });

  test("admin keys may write", async () => {
    const patched = expectData(await h.request("PATCH", `/v1/certificates/${certificateId}`, { key: h.keys.admin.key, body: { name: "by admin" } }), 200);
    expect(patched.name).toBe("by admin");
  });
});

describe("private-network targets", () => {
  test("a name resolving to 127.0.0.1 is refused when private targets are not allowed: 422, no connection made", async () => {
    const own = await createHarness({ config: { allowPrivateTargets: false } });
    const response = await own.request("POST", "/v1/certificates", { body: { domain: `internal.${TEST_DOMAIN}`, port: tls.port } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("resolves to a loopback address");
    expect(response.body.error.message).not.toContain("127.0.0.1");
    const before = tls.connections();
    await own.request("POST", "/v1/certificates", { body: { domain: `internal2.${TEST_DOMAIN}`, port: tls.port } });
    expect(tls.connections()).toBe(before);
    await own.close();
  });

  test("a name with one public and one private address is refused as a whole", async () => {
    const own = await createHarness({
      config: { allowPrivateTargets: false, resolve: [{ pattern: `mixed.${TEST_DOMAIN}`, address: "10.0.0.8" }] },
    });
    const response = await own.request("POST", "/v1/certificates", { body: { domain: `mixed.${TEST_DOMAIN}` } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("a private address");
    await own.close();
  });
});

describe("secrets at rest and revocation", () => {
  test("the database never holds a key, only its hash", async () => {
    const { key } = await h.makeKey("owner");
    await h.request("GET", "/v1/certificates", { key });
    await h.core.services.authenticator.flushUsage();
    const files = readdirSync(h.dir!);
    expect(files).toContain("test.db");
    for (const file of files) {
      const bytes = readFileSync(join(h.dir!, file));
      expect({ file, hasKey: bytes.includes(Buffer.from(key.slice(8))) }).toEqual({ file, hasKey: false });
    }
    // The check above can find a key: the hash it does hold is there.
    const { hashApiKey } = await import("../core/auth/api_key.ts");
    const all = Buffer.concat(files.map((file) => readFileSync(join(h.dir!, file))));
    expect(all.includes(Buffer.from(hashApiKey(key)))).toBe(true);
  });

  test("removing a user stops their keys at once (expired_api_key)", async () => {
    const { key, userId } = await h.makeKey("admin");
    expect((await h.request("GET", "/v1/certificates", { key })).status).toBe(200);
    await h.store.users.remove(userId, Date.now());
    expectError(await h.request("GET", "/v1/certificates", { key }), 401, "expired_api_key");
  });

  test("a role change applies to the user's existing keys on the next request", async () => {
    const { key, userId } = await h.makeKey("admin");
    await h.store.users.update(userId, { role: "member" });
    expectError(await h.request("DELETE", `/v1/certificates/${certificateId}`, { key }), 403, "permission_denied");
  });
});
