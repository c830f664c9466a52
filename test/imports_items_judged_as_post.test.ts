/**
 * Imports (CONTRACT §16) judge each item exactly as POST /v1/certificates would, in POST's order of
 * checks: an item naming a certificate already monitored, or arriving when the plan is already full,
 * is refused before any connection to its target (as POST refuses it); an item of exactly POST's
 * 64 KiB is read, as POST reads such a body, not refused as too large.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.imports-items.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await server.close();
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const name = (n: number | string) => `site-${n}.imports-items.${TEST_DOMAIN}`;

async function finish(harness: Harness, id: string) {
  await harness.core.services.imports!.loop.runDue();
  return expectData(await harness.request("GET", `/v1/imports/${id}`), 200);
}

describe("POST /v1/imports: refused before connecting, as POST refuses", () => {
  test("a plan already full (exactly at its limit): every item fails certificate_limit_reached and no target is connected to", async () => {
    h = await createHarness({ limits: { certificates: 2 } });
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("full-a"), port: server.port } }), 201);
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("full-b"), port: server.port } }), 201);
    const before = server.connections();
    // POST refuses at once, without a connection.
    expectError(await h.request("POST", "/v1/certificates", { body: { domain: name("full-c"), port: server.port } }), 402, "certificate_limit_reached");
    expect(server.connections()).toBe(before);
    const items = [0, 1, 2].map((n) => ({ domain: name(`full-${n}`), port: server.port }));
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["certificate_limit_reached", "certificate_limit_reached", "certificate_limit_reached"]);
    expect(server.connections()).toBe(before);
  });

  test("items naming certificates already monitored fail duplicate_domain without a connection", async () => {
    h = await createHarness();
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("dup-0"), port: server.port } }), 201);
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("dup-1"), port: server.port } }), 201);
    const before = server.connections();
    const post = await h.request("POST", "/v1/certificates", { body: { domain: name("dup-0"), port: server.port } });
    expectError(post, 409, "duplicate_domain");
    expect(server.connections()).toBe(before);
    const items = [0, 1].map((n) => ({ domain: name(`dup-${n}`), port: server.port }));
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["duplicate_domain", "duplicate_domain"]);
    expect(server.connections()).toBe(before);
  });
});

describe("POST /v1/imports: an item of exactly 64 KiB", () => {
  test("is judged on its fields, as POST judges a body of exactly 64 KiB, not refused as payload_too_large", async () => {
    h = await createHarness();
    const base = { domain: name("exact"), name: "" };
    const overhead = new TextEncoder().encode(JSON.stringify(base)).length;
    const item = { ...base, name: "x".repeat(64 * 1024 - overhead) };
    const text = JSON.stringify(item);
    expect(new TextEncoder().encode(text).length).toBe(64 * 1024);
    const post = await h.request("POST", "/v1/certificates", { rawBody: text, headers: { "content-type": "application/json" } });
    expectError(post, 400, "invalid_request");
    const { id } = expectData(await h.request("POST", "/v1/imports", { rawBody: `{"certificates":[${text}]}`, headers: { "content-type": "application/json" } }), 202);
    const done = await finish(h, id);
    expect(done.results[0]).toEqual({ index: 0, status: "failed", certificateId: null, error: post.body.error });
  });
});
