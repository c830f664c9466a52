/**
 * Upgrades of the SQL store: a channel's health read from deliveries made before it was kept counts
 * only attempts made (CONTRACT §23), and a new database is created, not "upgraded".
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate, SCHEMA_VERSION } from "../adapters/sql/migrations.ts";
import { DAY } from "../core/base/mod.ts";
import { executorOver } from "./support/executor_over.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-migrations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The schema of the last release before channel health was kept. */
const PREVIOUS_RELEASE_SCHEMA = 7;
const ORG = "org_healthupgrad0000000";
const CHANNEL = "ch_upgradhook000000000";

test("after the upgrade a channel's health ignores deliveries never attempted: queued ones and ones cancelled untried", async () => {
  const url = `file:${join(dir, "v7.db")}`;
  const now = Date.now();
  const t0 = now - 3 * DAY; // delivered
  const t1 = now - 2 * DAY; // queued, not tried yet
  const t2 = now - DAY; // cancelled (channel switched off meanwhile, since on again) before any attempt
  const old = executorOver(createClient({ url }));
  await migrate(old, { until: PREVIOUS_RELEASE_SCHEMA });
  await old.execute(
    `INSERT INTO organizations (id, name, plan, certificate_limit, channel_limit, rate_limit, created_at, watch_limit)
     VALUES (?, 'Acme', 'pro', 100, 10, 600, ?, 10)`,
    [ORG, now - 10 * DAY],
  );
  await old.execute(
    `INSERT INTO channels (id, organization_id, mode, type, name, enabled, config, signing_secret, created_at, updated_at, filter)
     VALUES (?, ?, 'live', 'webhook', 'hook', 1, '{"url":"http://127.0.0.1:9/hook"}', 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dA==', ?, ?, NULL)`,
    [CHANNEL, ORG, now - 10 * DAY, now - 10 * DAY],
  );
  const rows: Array<[string, string, number, number, string | null]> = [
    ["evt_healthupgrad0000000a", "delivered", 1, t0, null],
    ["evt_healthupgrad0000000b", "pending", 0, t1, null],
    ["evt_healthupgrad0000000c", "failed", 0, t2, "cancelled: the channel is disabled"],
  ];
  for (const [eventId, status, attempts, at, error] of rows) {
    await old.execute(`INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, 'live', 'test', NULL, '{}', ?)`, [eventId, ORG, at]);
    await old.execute(
      `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, lease_owner, last_error, updated_at, organization_id)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
      [eventId, CHANNEL, status, attempts, now + DAY, error, at, ORG],
    );
  }
  await old.close();

  const store = await openLibsqlStore({ url });
  try {
    const channel = await store.channels.get({ organizationId: ORG, mode: "live" }, CHANNEL);
    expect(channel?.health).toEqual({ lastDeliveryAt: t0, lastStatus: "delivered", lastError: null, failingSince: null });
  } finally {
    await store.close();
  }
});

test("a new database is created without being reported as an upgrade", async () => {
  const said: string[] = [];
  const db = executorOver(createClient({ url: `file:${join(dir, "new.db")}` }));
  try {
    await migrate(db, { report: { upgrading: (u) => said.push(`upgrading ${u.from} ${u.to}`), upgraded: (u) => said.push(`upgraded ${u.from} ${u.to}`), waiting: () => {} } });
    const { rows } = await db.execute("SELECT MAX(version) AS v FROM schema_migrations");
    expect(Number(rows[0]!.v)).toBe(SCHEMA_VERSION);
  } finally {
    await db.close();
  }
  expect(said).toEqual([]);
});
