/**
 * Numbered migrations carry an existing database forward: a database of an earlier version, with
 * certificates in it, opens at the current version and answers as a new one would (migration 3: the
 * status timeline of every stored certificate is computed by core, so filtering by status still works).
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { DAY } from "../core/base/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { executorOver } from "./support/executor_over.ts";
import { migrate, SCHEMA_VERSION } from "../adapters/sql/migrations.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-migrations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("migrations", () => {
  test("a version 2 database with certificates opens at the current version and filters them by status", async () => {
    const url = `file:${join(dir, "v2.db")}`;
    const now = Date.now();
    const old = executorOver(createClient({ url }));
    await migrate(old, { until: 2 });
    const insert = (id: string, notAfter: number, failure: string | null) =>
      old.execute(
        `INSERT INTO certificates (id, organization_id, mode, domain, port, name, alert_thresholds, expiring_horizon,
           created_at, updated_at, fingerprint, not_before, not_after, details, problem, last_checked_at, failure,
           failure_count, alerted_threshold, expiry_alerted, health, next_check_at, lease_owner, version)
         VALUES (?, 'org_1', 'live', ?, 443, ?, '[30,7]', 30, ?, ?, 'fp', ?, ?, ?, NULL, ?, ?, 0, NULL, 0, 'ok', ?, NULL, 1)`,
        [id, `${id}.example`, id, now, now, now - 10 * DAY, notAfter, JSON.stringify(details(now - 10 * DAY, notAfter)), now, failure, now + DAY],
      );
    await insert("cert_valid0000000000000", now + 90 * DAY, null);
    await insert("cert_expiring000000000", now + 5 * DAY, null);
    await insert("cert_expired0000000000", now - DAY, null);
    await insert("cert_unreachable000000", now + 90 * DAY, "timeout");
    await old.close();

    const store = await openLibsqlStore({ url });
    try {
      const scope = { organizationId: "org_1", mode: "live" as const };
      const ids = async (statuses: Array<"valid" | "expiring" | "expired" | "unreachable" | "invalid">) =>
        (await store.certificates.list(scope, { limit: 10, statuses, now })).map((record) => record.id);
      expect(await ids(["valid"])).toEqual(["cert_valid0000000000000"]);
      expect(await ids(["expiring", "expired"])).toEqual(["cert_expired0000000000", "cert_expiring000000000"]);
      expect(await ids(["unreachable"])).toEqual(["cert_unreachable000000"]);
      expect(await ids(["invalid"])).toEqual([]);
      const { byStatus } = await store.certificates.summarize(scope, { now, from: now, bucketMs: 7 * DAY, buckets: 12 });
      expect(byStatus).toEqual({ valid: 1, expiring: 1, expired: 1, unreachable: 1 });
    } finally {
      await store.close();
    }
    const reopened = executorOver(createClient({ url }));
    const { rows } = await reopened.execute("SELECT MAX(version) AS version FROM schema_migrations");
    expect(Number(rows[0]!.version)).toBe(SCHEMA_VERSION);
    const columns = (await reopened.execute("PRAGMA table_info(certificates)")).rows.map((row) => String(row.name));
    expect(columns).toContain("status_periods");
    expect(columns).not.toContain("expiring_horizon");
    // What keeps certificate_periods in step with each timeline.
    const triggers = (await reopened.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'certificates' ORDER BY name")).rows.map((row) => String(row.name));
    expect(triggers).toEqual(["certificate_periods_changed", "certificate_periods_inserted", "certificate_periods_removed"]);
    await reopened.close();
  });
});

test("a database migrated by a newer certkeeper is refused with a clear reason, its contents untouched", async () => {
  const url = `file:${join(dir, "newer.db")}`;
  const store = await openLibsqlStore({ url });
  await store.close();
  const client = createClient({ url });
  await client.execute({ sql: "INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)", args: [SCHEMA_VERSION + 1, Date.now()] });
  await expect(migrate(executorOver(client))).rejects.toThrow(/newer certkeeper \(schema \d+; this one knows \d+\)/);
  const { rows } = await client.execute("SELECT MAX(version) AS version FROM schema_migrations");
  expect(Number(rows[0]!.version)).toBe(SCHEMA_VERSION + 1);
  client.close();
  await expect(openLibsqlStore({ url })).rejects.toThrow(/newer certkeeper/);
});

function details(notBefore: number, notAfter: number) {
  return {
    serialNumber: "01",
    notBefore,
    notAfter,
    issuer: "Test CA",
    subject: "example",
    subjectAlternativeNames: ["example"],
    signatureAlgorithm: "sha256WithRSAEncryption",
    chain: [],
  };
}
