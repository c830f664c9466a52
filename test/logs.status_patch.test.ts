/**
 * Every status change of a certificate is one info line, old and new status and reason (CONTRACT §23),
 * the changes a PATCH brings too: a new alert policy (§18) or new thresholds change the status at once,
 * and the check that follows, judging under the new settings, tells nothing more.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { createLogger } from "../core/base/log.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";

setDefaultTimeout(30_000);
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

test("a status change brought by a PATCH of alertPolicy is logged once, old and new status and reason", async () => {
  const lines: Record<string, any>[] = [];
  const logger = createLogger("info", { write: (line: string) => lines.push(JSON.parse(line)), format: "json" } as any);
  const h = await createHarness({ logger, config: { alertPolicy: "days", revocation: false } as any });
  cleanups.push(() => h.close());
  const { rsaIntermediate } = await testPki();
  const domain = `policy-log.${TEST_DOMAIN}`;
  // 90 days of lifetime, 25 left: `days` says expiring (30-day threshold); `renewal` says valid (deadline at 22.5 days left).
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 65 * DAY), notAfter: new Date(Date.now() + 25 * DAY) });
  const server: TlsTestServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cleanups.push(() => server.close());

  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertPolicy: "days" } }), 201);
  const before = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect({ status: before.status, statusReason: before.statusReason }).toEqual({ status: "expiring", statusReason: "expiring_soon" });

  expectData(await h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "renewal" } }), 200);
  // "applies from the next check": make it.
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  await h.core.services.scheduler.runDue();
  const after = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect(after.status).toBe("valid");

  // The logger does capture the service's lines (the add was logged).
  expect(lines.some((l) => l.msg === "certificate added")).toBe(true);
  const changes = lines.filter((l) => l.msg === "certificate status changed" && l.certificateId === added.id);
  expect(changes).toEqual([expect.objectContaining({ level: "info", from: "expiring", to: "valid", fromReason: "expiring_soon", toReason: null, domain, port: server.port })]);
});

test("a PATCH of alertThresholds that changes the status is logged; one that does not, not", async () => {
  const lines: Record<string, any>[] = [];
  const logger = createLogger("info", { write: (line: string) => lines.push(JSON.parse(line)), format: "json" } as any);
  const h = await createHarness({ logger });
  cleanups.push(() => h.close());
  // Checked now, 20 days left, thresholds [30]: expiring under days.
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "thresholds.example", name: "thresholds.example", notBefore: Date.now() - 70 * DAY, notAfter: Date.now() + 20 * DAY, lastCheckedAt: Date.now(), alertThresholds: [30], alertPolicy: "days" });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  const changes = () => lines.filter((l) => l.msg === "certificate status changed" && l.certificateId === record.id);

  expectData(await h.request("PATCH", `/v1/certificates/${record.id}`, { body: { alertThresholds: [14, 7] } }), 200);
  expect(changes()).toEqual([expect.objectContaining({ level: "info", from: "expiring", to: "valid", fromReason: "expiring_soon", toReason: null })]);
  expectData(await h.request("PATCH", `/v1/certificates/${record.id}`, { body: { alertThresholds: [10], name: "Still valid" } }), 200);
  expect(changes()).toHaveLength(1);
});
