/**
 * CONTRACT §18: "A PATCH of alertPolicy applies from the next check: to days, §7's lowest crossed threshold
 * not yet raised for the serial is raised then". Thresholds a renewal_overdue covered were not raised: the
 * switch raises the lowest crossed one (7); one raised after the overdue alert is not raised again.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, SECOND } from "../core/base/mod.ts";
import { DEFAULT_CONFIG, type Config } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** certkeeper on the renewal policy and a clock started now, watching a server whose leaf of `lifetime` expires at `notAfterOf(start)`. */
async function world(domain: string, lifetime: number, notAfterOf: (start: number) => number) {
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const start = Date.now();
  const clock = new FakeClock(start);
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 2000,
    logLevel: "error",
    alertPolicy: "renewal",
    revocation: false,
    ari: false,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ config, clock, transports, trust, random: () => 0.5 });
  cleanups.push(() => transports.close(), () => h.close());
  const notAfter = notAfterOf(start);
  const issued = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notAfter - lifetime), notAfter: new Date(notAfter) });
  const server = await startTlsServer({ cert: chainPem(issued, rsaIntermediate), key: issued.keyPem });
  cleanups.push(() => server.close());
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const events = async () =>
    (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[])
      .filter((e) => e.certificateId === added.id)
      .reverse()
      .map((e) => [e.type, e.data.threshold ?? null]);
  return { h, clock, added, events, notAfter };
}

test("overdue under renewal (7 covered, not raised), then PATCH to days: the next check raises certificate.expiring for 7", async () => {
  const { h, clock, added, events } = await world(`switch-days.${TEST_DOMAIN}`, 90 * DAY, (start) => start + 5 * DAY + HOUR);
  expect(await events()).toEqual([["certificate.renewal_overdue", null]]);
  expectData(await h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "days" } }), 200);
  clock.advance(SECOND);
  await h.core.services.scheduler.runDue();
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await events()).toEqual([
    ["certificate.renewal_overdue", null],
    ["certificate.expiring", 7],
  ]);
});

test("a threshold raised after the overdue alert (7), then PATCH to days: nothing raised again; the next one (3) when crossed", async () => {
  const { h, clock, added, events, notAfter } = await world(`switch-days-raised.${TEST_DOMAIN}`, 45 * DAY, (start) => start + 10 * DAY);
  expect(await events()).toEqual([["certificate.renewal_overdue", null]]);
  // 7 crossed under renewal: raised.
  clock.set(notAfter - 7 * DAY + HOUR);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await events()).toEqual([["certificate.renewal_overdue", null], ["certificate.expiring", 7]]);
  expectData(await h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "days" } }), 200);
  clock.advance(SECOND);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await events()).toEqual([["certificate.renewal_overdue", null], ["certificate.expiring", 7]]);
  clock.set(notAfter - 3 * DAY + HOUR);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await events()).toEqual([["certificate.renewal_overdue", null], ["certificate.expiring", 7], ["certificate.expiring", 3]]);
});
