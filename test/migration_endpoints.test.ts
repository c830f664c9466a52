/**
 * Migration 6 (CONTRACT §11-§13): certificates stored before it keep every field, gain protocol tls, no
 * connectTo, no endpoints yet, and are due at once; a target becomes domain, port, protocol and connectTo.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { executorOver } from "./support/executor_over.ts";
import { migrate } from "../adapters/sql/migrations.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-migration-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a version 5 database migrates: a certificate keeps its fields, gets protocol tls, no connectTo, no endpoints, and is due at once", async () => {
  const url = `file:${join(dir, "v5.db")}`;
  const old = executorOver(createClient({ url }));
  await migrate(old, { until: 5 });
  const details = { serialNumber: "0A", notBefore: 1, notAfter: 2e12, issuer: "CA", subject: "old.example", subjectAlternativeNames: ["old.example"], signatureAlgorithm: "ecdsa-with-SHA256", chain: [] };
  await old.execute(
    `INSERT INTO certificates (id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at,
      fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, alerted_threshold, expiry_alerted,
      health, next_check_at, lease_owner, version) VALUES ('cert_old0000000000000', 'org_x', 'live', 'old.example', 443, 'Old', '[30]', '[]', 1, 1,
      'fp', 1, 2000000000000, ?, NULL, 1, NULL, 0, 30, 0, 'ok', 99999999999999, NULL, 7)`,
    [JSON.stringify(details)],
  );
  await old.close();

  const store = await openLibsqlStore({ url });
  try {
    const scope = { organizationId: "org_x", mode: "live" as const };
    const record = await store.certificates.get(scope, "cert_old0000000000000");
    expect(record).toEqual({
      id: "cert_old0000000000000",
      organizationId: "org_x",
      mode: "live",
      domain: "old.example",
      port: 443,
      protocol: "tls",
      connectTo: null,
      name: "Old",
      alertThresholds: [30],
      alertPolicy: "days",
      tags: [],
      mutedUntil: null,
      createdAt: 1,
      updatedAt: 1,
      fingerprint: "fp",
      details,
      problem: null,
      tls: null,
      endpoints: [],
      alertMemory: { leaves: [], chain: [] },
      deployment: null,
      lastCheckedAt: 1,
      failure: null,
      failureCount: 0,
      alertedThreshold: 30,
      expiryAlerted: false,
      health: "ok",
      nextCheckAt: 0,
      version: 8,
    });
    // The same domain and port through another server is another certificate now.
    expect(await store.certificates.insert({ ...record!, id: "cert_old0000000000001", connectTo: "192.0.2.1" }, { limit: 10, events: [] })).toBe("created");
    expect(await store.certificates.insert({ ...record!, id: "cert_old0000000000002" }, { limit: 10, events: [] })).toBe("duplicate");
  } finally {
    await store.close();
  }
});
