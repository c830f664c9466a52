/** Tags, mutes and filters across keys (CONTRACT §3): members read only; other organizations' tags are invisible. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";

let h: Harness;
let server: TlsTestServer;
beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.sec.${TEST_DOMAIN}`] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await server.close();
  await h.close();
});

describe("tags and mutes across keys", () => {
  test("a member key may list by tag but not change tags, mutes or filters (403)", async () => {
    const cert = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `m.sec.${TEST_DOMAIN}`, port: server.port, tags: ["x"] } }), 201);
    const member = h.keys.member.key;
    expect(expectData(await h.request("GET", "/v1/certificates?tag=x", { key: member }), 200).map((c: any) => c.id)).toEqual([cert.id]);
    expectError(await h.request("PATCH", `/v1/certificates/${cert.id}`, { key: member, body: { tags: [] } }), 403, "permission_denied");
    expectError(await h.request("PATCH", `/v1/certificates/${cert.id}`, { key: member, body: { mutedUntil: null } }), 403, "permission_denied");
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "m", config: { email: "a@b.co" } } }), 201);
    expectError(await h.request("PATCH", `/v1/channels/${channel.id}`, { key: member, body: { filter: null } }), 403, "permission_denied");
  });

  test("another organization's certificates never match a tag, and the test mode's neither", async () => {
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: `o.sec.${TEST_DOMAIN}`, port: server.port, tags: ["shared"] } }), 201);
    const org = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", org.id);
    expect(expectData(await h.request("GET", "/v1/certificates?tag=shared", { key: stranger.key }), 200)).toEqual([]);
    expect(expectData(await h.request("GET", "/v1/certificates?tag=shared", { key: h.keys.test.key }), 200)).toEqual([]);
  });
});
