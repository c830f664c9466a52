/**
 * CONTRACT §19, against a CA's ARI service (test/support/ari_server.ts):
 * - "a window whose end is not after its start […] is an error": a window that ends when it starts (or
 *   before), well inside the leaf's lifetime, is not used: the lifetime rule, no event.
 * (The existing "ends before it starts" case has a window in 2030, after the leaf's notAfter, which
 * another rule already refuses: it does not tell whether start and end are compared.)
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, SECOND } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { certIdOf, rfc3339, startAriServer, type AriServer } from "./support/ari_server.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);

let ari: AriServer;
const cleanups: Array<() => Promise<unknown> | unknown> = [];
beforeAll(async () => {
  ari = await startAriServer({ tlsIssuer: (await testPki()).rsaIntermediate });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await ari.close();
});

async function world(): Promise<{ h: Harness; clock: FakeClock }> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const clock = new FakeClock(Date.now());
  const full: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 1500,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ari.directoryUrl }],
  };
  const transports = createTransports(full, trust);
  const h = await createHarness({ config: full, clock, transports, trust });
  cleanups.push(() => transports.close(), () => h.core.stop());
  return { h, clock };
}

async function served(domain: string, notBefore: number, notAfter: number): Promise<{ leaf: Issued; server: TlsTestServer }> {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());
  return { leaf, server };
}

async function eventTypes(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).reverse().map((e) => e.type);
}

const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

describe("a suggested window whose end is not after its start is an error (CONTRACT §19)", () => {
  test.each([
    ["empty", 0],
    ["reversed", -DAY],
  ] as const)("a window %s, inside the lifetime: the lifetime rule, no event", async (label, length) => {
    const w = await world();
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    const domain = `window-${label}.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, notBefore, notAfter);
    // Inside the lifetime, after its midpoint: as a window it would be the deadline, no request.
    const start = now + 50 * DAY;
    ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start: rfc3339(start), end: rfc3339(start + length) } }) });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(ari.requests.some((r) => r.certId === certIdOf(leaf))).toBe(true);
    expect({ status: got.status, renewal: got.renewal, events: await eventTypes(w.h, added.id) }).toEqual({
      status: "valid",
      renewal: {
        deadline: new Date(notBefore + Math.ceil((notAfter - notBefore) * 0.75)).toISOString(),
        source: "lifetime",
        window: null,
        explanationUrl: null,
        state: "not_due",
        checkedAt: null,
      },
      events: [],
    });
  });
});
