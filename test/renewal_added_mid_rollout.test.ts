/**
 * A certificate added while a rollout to shorter-lived certificates is under way (CONTRACT §18, §20;
 * §16's PagerDuty `renewal` key). One node already serves the new leaf (45 days, which expires before
 * the old 200-day one, so it is the certificate-level leaf); the other still serves the old leaf, past
 * its renewal deadline: one `certificate.renewal_overdue` names that node (data.endpoint). When that
 * node is fixed and every answering endpoint serves the new leaf, `certificate.renewed` is raised
 * once, as for the same rollout seen from its start, and it resolves the incident the overdue opened.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(120_000);

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function leaf(domain: string, notBefore: number, lifetime: number, serial: string): Promise<Issued> {
  const { rsaIntermediate } = await testPki();
  return createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notBefore + lifetime), serial });
}

async function serve(issued: Issued, options: { host?: string; port?: number } = {}): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const server = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem, ...options });
  cleanups.push(() => server.close());
  return server;
}

describe("a certificate added in the middle of a rollout to shorter-lived certificates", () => {
  test("the forgotten node fixed: certificate.renewed once every answering endpoint serves the new leaf", async () => {
    const start = Date.now();
    const clock = new FakeClock(start);
    const domain = `midrollout.${TEST_DOMAIN}`;
    const { root, rsaIntermediate } = await testPki();
    const trust = new TrustStore([root.certPem]);
    const config: Config = {
      ...DEFAULT_CONFIG,
      allowPrivateTargets: true,
      resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }],
      tlsTimeoutMs: 2000,
      deliveryRetryMs: [1000],
      logLevel: "error",
      alertPolicy: "renewal",
      revocation: false,
      ari: false,
    };
    const transports = createTransports(config, trust);
    const h = await createHarness({ config, clock, transports, trust, random: () => 0.5 });
    cleanups.push(() => transports.close(), () => h.close());

    // The old leaf: 200 days, its deadline (three quarters) passed 5 days ago; 45 days left.
    const old = await leaf(domain, start - 155 * DAY, 200 * DAY, "0d01");
    // The new leaf: 45 days, issued a day ago; it expires 2 days before the old one.
    const fresh = await leaf(domain, start - DAY, 45 * DAY, "0d02");
    const a = await serve(fresh);
    const b = await serve(old, { host: "127.0.0.2", port: a.port });
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);

    const events = async () =>
      (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[])
        .filter((e) => e.certificateId === added.id)
        .reverse()
        .map((e) => [e.type, e.data.endpoint?.serialNumber ?? null]);
    // The forgotten node's old leaf is overdue: one renewal_overdue naming it.
    expect(await events()).toEqual([["certificate.renewal_overdue", "0D:01"]]);

    // The forgotten node is fixed: every node serves the new leaf now.
    b.setCertificate(chainPem(fresh, rsaIntermediate), fresh.keyPem);
    for (let at = start + HOUR; at <= start + 2 * DAY; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(got.endpoints.map((e: any) => e.serialNumber)).toEqual(["0D:02", "0D:02"]);
    expect([got.status, got.renewal.state]).toEqual(["valid", "not_due"]);
    // CONTRACT §20: certificate.renewed, once, when every answering endpoint serves the new one
    // (it also resolves the PagerDuty `renewal` incident the overdue alert opened).
    expect(await events()).toEqual([
      ["certificate.renewal_overdue", "0D:01"],
      ["certificate.renewed", null],
    ]);
  });
});
