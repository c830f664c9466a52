/**
 * Review (CONTRACT §23 "Logs of what happened"): every status change of a certificate is one info
 * line (old and new status and reason). A PATCH of `alertPolicy` (Part III, §18) changes the status
 * (days: expiring/expiring_soon; renewal before the deadline: valid), yet no line ever tells it.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { createLogger } from "../core/base/log.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";

setDefaultTimeout(30_000);
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

test("a status change brought by a PATCH of alertPolicy is logged (old and new status and reason)", async () => {
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
  expect(changes).toContainEqual(expect.objectContaining({ from: "expiring", to: "valid", fromReason: "expiring_soon", toReason: null }));
});
