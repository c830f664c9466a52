/**
 * Processes started together upgrade the database once: one migrates, the others wait for it, then
 * find the work done, also on a libSQL server (sqld) and a large database of the release before Part
 * III (schema 7; migration 8 recomputes every certificate's timeline). sqld ends a transaction that
 * holds the write lock for more than a few seconds while another process waits (TRANSACTION_TIMEOUT):
 * written a round trip a row, 16,000 certificates took longer, and the first process failed to start
 * while the second redid the migration. Now a page of rows is one statement, and a transaction so
 * ended is taken as busy and tried again.
 */
import { expect, test } from "bun:test";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate, SCHEMA_VERSION } from "../adapters/sql/migrations.ts";
import { executorOver } from "./support/executor_over.ts";
import { startSqld } from "./support/sqld.ts";

/** The schema of the release before Part III. */
const PART_II_SCHEMA = 7;
const CERTIFICATES = 16_000;
const DAY = 86_400_000;

test("two processes started together on sqld upgrade an older release's large database once, both starting", async () => {
  const sqld = await startSqld();
  try {
    const client = createClient({ url: sqld.url });
    await migrate(executorOver(client), { until: PART_II_SCHEMA });
    // Rows as the release before Part III wrote them.
    const now = Date.now();
    const notBefore = now - 60 * DAY;
    const notAfter = now + 30 * DAY;
    const details = JSON.stringify({
      serialNumber: "5E:1A",
      notBefore,
      notAfter,
      issuer: "certkeeper intermediates",
      subject: "a.example",
      subjectAlternativeNames: ["a.example"],
      signatureAlgorithm: "sha256WithRSAEncryption",
      chain: [],
      pathValidUntil: null,
      fingerprintSha256: "AA",
      publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
      warnings: [],
      chainExpiry: null,
      revocation: { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null, validUntil: null },
    });
    const periods = JSON.stringify([
      [Number.MIN_SAFE_INTEGER, notBefore, "invalid"],
      [notBefore, notAfter - 31 * DAY + 1, "valid"],
      [notAfter - 31 * DAY + 1, notAfter + 1, "expiring"],
      [notAfter + 1, Number.MAX_SAFE_INTEGER, "expired"],
    ]);
    await client.execute({
      sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CERTIFICATES})
        INSERT INTO certificates (id, organization_id, mode, domain, port, name, alert_thresholds, status_periods, created_at, updated_at,
          fingerprint, not_before, not_after, details, problem, last_checked_at, failure, failure_count, alerted_threshold, expiry_alerted,
          health, next_check_at, lease_owner, version, tags, muted_until, protocol, connect_to, endpoints, tls, alert_memory)
        SELECT printf('cert_%020d', i), 'org_big', 'live', printf('h%d.example', i), 443, 'n', '[30,14,7,3,1]', ?, ?, ?, 'fp', ?, ?, ?, NULL, ?, NULL, 0, 30, 0,
          'ok', ?, NULL, 3, '[]', NULL, 'tls', '',
          '[{"address":"127.0.0.1","fingerprint":"fp","details":"=","problem":null,"failure":null,"tls":{"protocol":"TLSv1.3","cipher":"TLS_AES_128_GCM_SHA256"}}]',
          '{"protocol":"TLSv1.3","cipher":"TLS_AES_128_GCM_SHA256"}', '{"leaves":[],"chain":[]}' FROM n`,
      args: [periods, now, now, notBefore, notAfter, details, now, now + 3_600_000],
    });
    client.close();

    // Two processes of this release started together (the second a moment later, as a service
    // manager starting two units does).
    const opened = await Promise.allSettled([
      openLibsqlStore({ url: sqld.url }),
      Bun.sleep(500).then(() => openLibsqlStore({ url: sqld.url })),
    ]);
    const outcomes = opened.map((o) => (o.status === "fulfilled" ? "started" : String((o.reason as Error)?.message ?? o.reason)));
    for (const o of opened) if (o.status === "fulfilled") await o.value.close();

    const check = createClient({ url: sqld.url });
    try {
      const { rows } = await check.execute("SELECT MAX(version) AS version FROM schema_migrations");
      expect(Number(rows[0]!.version)).toBe(SCHEMA_VERSION);
    } finally {
      check.close();
    }
    expect(outcomes).toEqual(["started", "started"]);
  } finally {
    await sqld.close();
  }
}, 120_000);
