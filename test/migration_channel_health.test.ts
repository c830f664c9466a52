/**
 * Channels' delivery health (CONTRACT §23) on a database made before it was kept (schema 7): the
 * upgrade reads it from the deliveries already made. A channel whose alerts have been failing for days
 * reads as failing since its first failure after its last delivery (the API's health, `channel list`'s
 * LAST DELIVERY column and the console's "a channel is failing" banner all read it), and a channel that
 * delivered reads as delivered, not as never used.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate } from "../adapters/sql/migrations.ts";
import { DAY } from "../core/base/mod.ts";
import { executorOver } from "./support/executor_over.ts";
import { createHarness, expectData } from "./support/harness.ts";

/** The schema of the last release before Part III (fcf7372). */
const PREVIOUS_RELEASE_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-upgrade-health-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORG = "org_upgradehealth000000";
const OK = "ch_okhook0000000000000";
const BAD = "ch_badhook000000000000";
const ERROR = "The endpoint answered HTTP 500 (gave up after 3 attempts)";

test("after the upgrade a channel's health reflects its deliveries made before it: a failing channel is failing, a working one delivered", async () => {
  const url = `file:${join(dir, "v7.db")}`;
  const now = Date.now();
  const t0 = now - 3 * DAY; // both channels delivered
  const t1 = now - 2 * DAY; // the bad one's first failure (3 attempts, given up)
  const t2 = now - DAY; // ok delivered again; bad failed again
  const old = executorOver(createClient({ url }));
  await migrate(old, { until: PREVIOUS_RELEASE_SCHEMA });
  // Rows as fcf7372 wrote them (an enterprise organization, two webhook channels, events and their deliveries).
  await old.execute(
    `INSERT INTO organizations (id, name, plan, certificate_limit, channel_limit, rate_limit, created_at, watch_limit)
     VALUES (?, 'Acme upgraded', 'enterprise', 100000, 1000, 6000, ?, 1000)`,
    [ORG, now - 10 * DAY],
  );
  for (const [id, name] of [[OK, "ok hook"], [BAD, "bad hook"]] as const) {
    await old.execute(
      `INSERT INTO channels (id, organization_id, mode, type, name, enabled, config, signing_secret, created_at, updated_at, filter)
       VALUES (?, ?, 'live', 'webhook', ?, 1, '{"url":"http://127.0.0.1:9/hook"}', 'whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0dA==', ?, ?, NULL)`,
      [id, ORG, name, now - 10 * DAY, now - 10 * DAY],
    );
  }
  const events: Array<[string, number]> = [
    ["evt_upgradehealth00000a", t0],
    ["evt_upgradehealth00000b", t1],
    ["evt_upgradehealth00000c", t2],
  ];
  for (const [id, at] of events) {
    await old.execute(
      `INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, 'live', 'test', NULL, '{}', ?)`,
      [id, ORG, at],
    );
  }
  const delivery = (eventId: string, channelId: string, status: string, attempts: number, at: number, error: string | null) =>
    old.execute(
      `INSERT INTO deliveries (event_id, channel_id, status, attempts, next_attempt_at, lease_owner, last_error, updated_at, organization_id)
       VALUES (?, ?, ?, ?, ?, NULL, ?, ?, ?)`,
      [eventId, channelId, status, attempts, at, error, at, ORG],
    );
  await delivery(events[0]![0], OK, "delivered", 1, t0, null);
  await delivery(events[0]![0], BAD, "delivered", 1, t0, null);
  await delivery(events[1]![0], OK, "delivered", 1, t1, null);
  await delivery(events[1]![0], BAD, "failed", 3, t1, ERROR);
  await delivery(events[2]![0], OK, "delivered", 1, t2, null);
  await delivery(events[2]![0], BAD, "failed", 3, t2, ERROR);
  await old.close();

  // The new version opens (and migrates) the file.
  const h = await createHarness({ store: await openLibsqlStore({ url }) });
  try {
    const { key } = await h.makeKey("owner", "live", ORG);
    const channels = expectData(await h.request("GET", "/v1/channels", { key }), 200) as Array<{ id: string; health: Record<string, unknown> }>;
    const health = Object.fromEntries(channels.map((channel) => [channel.id, channel.health]));
    expect(health[BAD]).toEqual({ lastDeliveryAt: new Date(t2).toISOString(), lastStatus: "failed", lastError: ERROR, failingSince: expect.any(String) });
    expect(health[OK]).toEqual({ lastDeliveryAt: new Date(t2).toISOString(), lastStatus: "delivered", lastError: null, failingSince: null });
    // Failing since its first failure after the last success (t1), not since some moment after the upgrade.
    const since = Date.parse(String(health[BAD]!.failingSince));
    expect(since).toBeGreaterThan(t0);
    expect(since).toBeLessThanOrEqual(t1);
  } finally {
    await h.close();
  }
});
