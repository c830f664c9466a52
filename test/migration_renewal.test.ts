/**
 * Migration 8 (CONTRACT §18): a database written before alert policies existed (schema 7, rows as
 * that version wrote them) opens with every certificate on the `days` policy, exactly as before: the same
 * status and the same §7 alerts; its timeline gains the renewal state, so `renewal=` filters it at once;
 * and its next check fills in what ARI needs (the leaf's certID) from the server.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate, SCHEMA_VERSION } from "../adapters/sql/migrations.ts";
import { DAY } from "../core/base/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import { executorOver } from "./support/executor_over.ts";
import { createHarness, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";

/** The schema of the last release before alert policies (what a database made by it holds). */
const PREVIOUS_RELEASE_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-migration-8-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("certificates stored before alert policies keep days: status, alerts and filters as before, the renewal state known at once", async () => {
  const { rsaIntermediate } = await testPki();
  const domain = `legacy.${TEST_DOMAIN}`;
  const now = Date.now();
  const notBefore = Math.floor((now - 85 * DAY) / 1000) * 1000;
  const notAfter = Math.floor((now + 5 * DAY + 3_600_000) / 1000) * 1000;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter), serial: "5e1a" });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  try {
    const url = `file:${join(dir, "v7.db")}`;
    const old = executorOver(createClient({ url }));
    await migrate(old, { until: PREVIOUS_RELEASE_SCHEMA });
    expect(SCHEMA_VERSION).toBeGreaterThan(PREVIOUS_RELEASE_SCHEMA);
    // A row as the previous version wrote it: details without the issuer names and certID, a status
    // timeline of [from, until, status] triples, the 14-day threshold already announced.
    const details = {
      serialNumber: "5E:1A",
      notBefore,
      notAfter,
      issuer: "certkeeper intermediates",
      subject: domain,
      subjectAlternativeNames: [domain],
      signatureAlgorithm: "sha256WithRSAEncryption",
      chain: [{ subject: domain, issuer: "certkeeper Test RSA CA", validFrom: new Date(notBefore).toISOString(), validTo: new Date(notAfter).toISOString(), serialNumber: "5E:1A", fingerprintSha256: "AA" }],
      pathValidUntil: null,
      fingerprintSha256: "AA",
      publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
      warnings: [],
      chainExpiry: null,
      revocation: { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null, validUntil: null },
    };
    const periods = [
      [Number.MIN_SAFE_INTEGER, notBefore, "invalid"],
      [notBefore, notAfter - 31 * DAY + 1, "valid"],
      [notAfter - 31 * DAY + 1, notAfter + 1, "expiring"],
      [notAfter + 1, Number.MAX_SAFE_INTEGER, "expired"],
    ];
    await old.execute(
      `INSERT INTO certificates (id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at,
        fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, alerted_threshold, expiry_alerted,
        health, next_check_at, lease_owner, version, tags, muted_until, protocol, connect_to, endpoints, tls, alert_memory)
       VALUES ('cert_legacy000000000000', 'org_legacy', 'live', ?, ?, 'Legacy', '[30,14,7,3,1]', ?, ?, ?, 'fp-old', ?, ?, ?, NULL, ?, NULL, 0, 14, 0, 'ok', ?, NULL, 3,
        '[]', NULL, 'tls', '', '[{"address":"127.0.0.1","fingerprint":"fp-old","details":"=","problem":null,"failure":null,"tls":{"protocol":"TLSv1.3","cipher":"TLS_AES_128_GCM_SHA256"}}]',
        '{"protocol":"TLSv1.3","cipher":"TLS_AES_128_GCM_SHA256"}', '{"leaves":[],"chain":[]}')`,
      [domain, server.port, JSON.stringify(periods), now - DAY, now - DAY, notBefore, notAfter, JSON.stringify(details), now - DAY, now + 3_600_000],
    );
    await old.close();

    // The server (any version from now on) opens it and migrates.
    const store = await openLibsqlStore({ url });
    const h = await createHarness({ store, config: { alertPolicy: "renewal" } });
    try {
      const scope = { organizationId: "org_legacy", mode: "live" as const };
      const record = (await store.certificates.get(scope, "cert_legacy000000000000"))!;
      expect([record.alertPolicy, record.version]).toEqual(["days", 4]);
      const view = presentCertificate(record, Date.now());
      expect([view.status, view.statusReason, view.alertPolicy]).toEqual(["expiring", "expiring_soon", "days"]);
      expect(view.renewal).toEqual({
        deadline: new Date(notBefore + Math.ceil(((notAfter - notBefore) * 3) / 4)).toISOString(),
        source: "lifetime",
        window: null,
        explanationUrl: null,
        state: "overdue",
        checkedAt: null,
      });
      // Filters read the rewritten timeline.
      const ids = async (query: Parameters<typeof store.certificates.list>[1]) => (await store.certificates.list(scope, query)).map((c) => c.id);
      expect(await ids({ limit: 10, now: Date.now(), renewalStates: ["overdue"] })).toEqual(["cert_legacy000000000000"]);
      expect(await ids({ limit: 10, now: Date.now(), statuses: ["expiring"] })).toEqual(["cert_legacy000000000000"]);
      expect(await ids({ limit: 10, now: Date.now(), renewalStates: ["not_due", "requested"] })).toEqual([]);

      // Its next check, under days: §7's next threshold (7), no renewal_overdue; the leaf's certID is read now.
      const checked = (await h.core.services.monitor.check(record, { manual: true }))!;
      expect(checked.events.map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 7]]);
      const after = (await store.certificates.get(scope, record.id))!;
      expect(after.details.ariCertId).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
      expect(after.details.issuerNames).toEqual(["certkeeper intermediates", "certkeeper Test RSA CA"]);
      expect(after.alertPolicy).toBe("days");
    } finally {
      await h.close();
    }
  } finally {
    await server.close();
  }
});
