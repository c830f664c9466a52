/**
 * A name holding U+0000 (CONTRACT §5's certificate name, §6's channel name: 1–100 characters). The
 * libSQL store keeps only what precedes a NUL, so a name taken whole would be answered whole and shown
 * cut afterwards (and a name of "\u0000" stored empty). Every string of a request body is refused with
 * 400 invalid_request when it holds one, the field named, and nothing changes: never a silent cut.
 * The settings area's names (an organization's, a key's) likewise.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectError, testPki, TEST_DOMAIN, type Harness, type TestResponse } from "./support/harness.ts";

let h: Harness;
let tls: TlsTestServer;
beforeAll(async () => {
  h = await createHarness({ store: "libsql" });
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await tls.close();
});

/** A write that names `sent`: refused as invalid_request, or what is read back afterwards is `sent`. */
function expectKeptOrRefused(write: TestResponse, readBack: () => Promise<string>, sent: string) {
  if (write.status >= 400) return expectError(write, 400, "invalid_request");
  return readBack().then((stored) => expect({ answered: write.body.data.name, stored }).toEqual({ answered: sent, stored: sent }));
}

describe("a NUL character in a name is refused (or kept), never cut off at the NUL", () => {
  test("POST /v1/certificates with name \"pay\\u0000ments\": GET and the list show the name the 201 answered", async () => {
    const sent = "pay\u0000ments";
    const added = await h.request("POST", "/v1/certificates", { body: { domain: `nul-add.${TEST_DOMAIN}`, port: tls.port, name: sent } });
    await expectKeptOrRefused(added, async () => (await h.request("GET", `/v1/certificates/${added.body.data.id}`)).body.data.name, sent);
    if (added.status === 201) {
      const listed = (await h.request("GET", `/v1/certificates?domain=nul-add`)).body.data;
      expect(listed.map((c: { name: string }) => c.name)).toEqual([sent]);
    }
  });

  test("PATCH /v1/certificates/{id} with name \"\\u0000\": never stored as an empty name", async () => {
    const created = await h.request("POST", "/v1/certificates", { body: { domain: `nul-patch.${TEST_DOMAIN}`, port: tls.port } });
    expect(created.status).toBe(201);
    const patched = await h.request("PATCH", `/v1/certificates/${created.body.data.id}`, { body: { name: "\u0000" } });
    await expectKeptOrRefused(patched, async () => (await h.request("GET", `/v1/certificates/${created.body.data.id}`)).body.data.name, "\u0000");
    const name = (await h.request("GET", `/v1/certificates/${created.body.data.id}`)).body.data.name;
    expect(name.length).toBeGreaterThanOrEqual(1);
  });

  test("POST /v1/channels with name \"ops\\u0000team\": GET shows the name the 201 answered", async () => {
    const sent = "ops\u0000team";
    const added = await h.request("POST", "/v1/channels", { body: { type: "webhook", name: sent, config: { url: "http://127.0.0.1:9/hook" } } });
    await expectKeptOrRefused(added, async () => (await h.request("GET", `/v1/channels/${added.body.data.id}`)).body.data.name, sent);
  });
});

describe("the message and what is left unchanged", () => {
  test("the field is named, and a refused patch leaves the stored name as it was", async () => {
    const created = await h.request("POST", "/v1/certificates", { body: { domain: `nul-named.${TEST_DOMAIN}`, port: tls.port, name: "Shop" } });
    expect(created.status).toBe(201);
    const patched = await h.request("PATCH", `/v1/certificates/${created.body.data.id}`, { body: { name: "Sh\u0000op" } });
    expectError(patched, 400, "invalid_request");
    expect(patched.body.error.message).toBe('Field "name" must not contain the NUL character (U+0000).');
    expect((await h.request("GET", `/v1/certificates/${created.body.data.id}`)).body.data.name).toBe("Shop");
    // Nested: a webhook's header value is the channel's config (invalid_config, as its other faults).
    const hook = await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "hook", config: { url: "http://127.0.0.1:9/hook", headers: { "X-Team": "a\u0000b" } } } });
    expectError(hook, 400, "invalid_config");
    expect(hook.body.error.message).toBe('Field "config.headers.X-Team" must not contain the NUL character (U+0000).');
  });

  test("an organization's or a key's name with a NUL is refused by the settings area's accounts", async () => {
    const admin = h.core.services.admin;
    await expect(admin.createOrganization({ name: "Ac\u0000me" })).rejects.toThrow('Field "name" must not contain the NUL character (U+0000).');
    await expect(admin.createApiKey({ userId: h.keys.owner.userId, name: "de\u0000ploy", mode: "live" })).rejects.toThrow("NUL character");
  });
});
