/**
 * A revocation is for good (CONTRACT §14; RFC 5280 §5.3.1: only certificateHold may be released): once
 * a check found the leaf revoked, later checks keep it revoked without asking again, even after the
 * answer's nextUpdate, when the responder then says "good" or is down. And a revocation answer that
 * cannot be had at all (the question itself throws: a cache that cannot be read) is soft-fail
 * `unavailable`, never a failed check.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { LeafRevocation } from "../core/revocation/mod.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { FakeClock } from "./support/fake_clock.ts";

let responder: Responder;
const servers: TlsTestServer[] = [];
const harnesses: Array<() => Promise<void>> = [];

beforeAll(async () => {
  responder = await startResponder();
});
afterAll(async () => {
  for (const close of harnesses) await close();
  await Promise.all(servers.map((s) => s.close()));
  await responder.close();
});

async function harness(clock: FakeClock, config: Partial<Config> = {}): Promise<Harness> {
  const { root } = await testPki();
  const full = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], tlsTimeoutMs: 2000, ...config };
  const transports = createTransports(full, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  const h = await createHarness({ transports, config, passwords: bunPasswords, clock });
  harnesses.push(async () => {
    await h.close();
    await transports.close();
  });
  return h;
}

describe("a revoked leaf stays revoked", () => {
  test("after its answer's nextUpdate, a responder now saying good (or down) changes nothing, and is not asked again", async () => {
    const clock = new FakeClock(Date.now());
    const h = await harness(clock);
    const { rsaIntermediate } = await testPki();
    const domain = `stays-revoked.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/stays-revoked`] });
    let answer: "revoked" | "good" | "down" = "revoked";
    const previous = responder.answer;
    responder.answer = (request) => {
      if (request.path !== "/stays-revoked") return previous(request);
      if (answer === "down") return { status: 503 };
      return {
        body: ocspAnswer({
          leaf,
          issuer: rsaIntermediate,
          status: answer === "good" ? { good: true } : { revoked: { at: new Date(clock.now() - 86_400_000), reason: 1 } },
          thisUpdate: new Date(clock.now() - 60_000),
          nextUpdate: new Date(clock.now() + 3_600_000),
        }),
      };
    };
    const asked = () => responder.requests.filter((r) => r.path === "/stays-revoked").length;
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    servers.push(server);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([shown.status, shown.revocation.status, shown.revocation.reason]).toEqual(["revoked", "revoked", "keyCompromise"]);
    const askedOnce = asked();
    for (const next of ["good", "down"] as const) {
      answer = next;
      clock.advance(2 * 3_600_000);
      const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
      expect([checked.status, checked.statusReason, checked.revocation.status, checked.revocation.reason]).toEqual(["revoked", "revoked", "revoked", "keyCompromise"]);
    }
    expect(asked()).toBe(askedOnce);
  });
});

describe("soft-fail", () => {
  test("a question that throws (a cache that cannot be read) is unavailable, and the rest of the check goes on", async () => {
    const now = Date.now();
    const state = await new LeafRevocation(true).state({ previous: undefined, ask: () => Promise.reject(new Error("the cache cannot be read")), now });
    expect(state).toEqual({ status: "unavailable", source: null, checkedAt: now, revokedAt: null, reason: null, validUntil: null });
  });
});
