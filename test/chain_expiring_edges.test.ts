/**
 * CONTRACT §13: `certificate.chain_expiring` is about a certificate above the leaf that expires
 * *before* the leaf. A leaf whose validity was cut to its issuer's expiry (a common CA practice: the
 * leaf and the intermediate end at the same second) raises the leaf's `certificate.expiring` only; a
 * second, chain_expiring, alert for the same moment would be a doubled alert. And each threshold of an
 * intermediate that does expire first is raised when it is crossed (CONTRACT §13, §7's rule), not at
 * whatever regular check comes next. Real TLS server, the test PKI, a fake clock.
 */
import { afterEach, expect, test } from "bun:test";
import { chainPem, createIntermediateCa, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { HOUR, MINUTE } from "../core/base/time.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

for (const store of ["memory", "libsql"] as const) {
  test(`${store}: a leaf ending at the same second as its intermediate raises certificate.expiring, never certificate.chain_expiring`, async () => {
    const { root } = await testPki();
    const clock = new FakeClock(Date.now());
    const h = await createHarness({ store, clock });
    cleanups.push(() => h.close());
    const end = new Date(Math.floor((Date.now() + 5 * DAY + 3_600_000) / 1000) * 1000);
    const ca = await createIntermediateCa(root, { name: "CN=Same End CA, O=Same End", notAfter: end });
    const domain = `same-end-${store}.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ca, dnsNames: [domain], notAfter: end, freshKey: true });
    const server = await startTlsServer({ cert: chainPem(leaf, ca), key: leaf.keyPem });
    cleanups.push(() => server.close());

    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([cert.expiresAt, cert.chainExpiresAt]).toEqual([end.toISOString(), end.toISOString()]);
    expect([cert.status, cert.statusReason, cert.daysUntilExpiry]).toEqual(["expiring", "expiring_soon", 5]);

    // Two days on (threshold 3 crossed) and checked twice: the leaf's thresholds only.
    clock.advance(2 * DAY);
    expectData(await h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    expectData(await h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    const events = (expectData(await h.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.certificateId === cert.id);
    expect(events.map((e) => [e.type, e.data.threshold ?? null]).reverse()).toEqual([
      ["certificate.expiring", 7],
      ["certificate.expiring", 3],
    ]);
  });
}

for (const store of ["memory", "libsql"] as const) {
  test(`${store}: an intermediate's threshold is announced at its crossing, not at the next regular check`, async () => {
    const { root } = await testPki();
    const clock = new FakeClock(Date.now());
    // A long interval: the regular check is up to a day away, so only a check due at the crossing is in time.
    const h = await createHarness({ store, clock, config: { checkIntervalMs: 24 * HOUR } });
    cleanups.push(() => h.close());
    const caEnd = Math.floor((Date.now() + 10 * DAY + 3 * HOUR) / 1000) * 1000;
    const ca = await createIntermediateCa(root, { name: "CN=Ten Days CA, O=Ten Days", notAfter: new Date(caEnd) });
    const domain = `chain-crossing-${store}.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ca, dnsNames: [domain], notAfter: new Date(Date.now() + 90 * DAY), freshKey: true });
    const server = await startTlsServer({ cert: chainPem(leaf, ca), key: leaf.keyPem });
    cleanups.push(() => server.close());
    const cert = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [14, 7] } }), 201);
    const chainEvents = async () =>
      ((expectData(await h.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.certificateId === cert.id && e.type === "certificate.chain_expiring")).map((e) => [e.data.threshold, e.createdAt]).reverse();
    expect((await chainEvents()).map(([t]) => t)).toEqual([14]);

    // Threshold 7 is crossed once fewer than 8 days are left of the intermediate.
    const crossing = caEnd - 8 * DAY + 1;
    while (clock.now() < crossing - MINUTE) {
      clock.set(Math.min(clock.now() + HOUR, crossing - MINUTE));
      await h.core.services.scheduler.runDue();
    }
    expect((await chainEvents()).map(([t]) => t)).toEqual([14]);
    clock.set(crossing);
    await h.core.services.scheduler.runDue();
    const events = await chainEvents();
    expect(events.map(([t]) => t)).toEqual([14, 7]);
    expect(Date.parse(events[1]![1])).toBe(crossing);
  });
}
