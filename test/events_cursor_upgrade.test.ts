/**
 * A `GET /v1/events` cursor handed out before cursors named events (base64url of `[seq]`, the page's
 * last event's installation-wide seq), passed back unchanged after the upgrade as CONTRACT §4 and the
 * error message itself tell clients to do, gets the next page (within the caller's organization and
 * mode), not 400 invalid_request: a client paging through events across the upgrade loses nothing.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate } from "../adapters/sql/migrations.ts";
import { executorOver } from "./support/executor_over.ts";
import { createHarness } from "./support/harness.ts";

/** The schema of the last release before Part III (fcf7372). */
const PREVIOUS_RELEASE_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-upgrade-cursor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ORG = "org_upgradecursor000000";

test("an events cursor the previous release handed out still pages after the upgrade", async () => {
  const url = `file:${join(dir, "v7.db")}`;
  const now = Date.now();
  const old = executorOver(createClient({ url }));
  await migrate(old, { until: PREVIOUS_RELEASE_SCHEMA });
  await old.execute(
    `INSERT INTO organizations (id, name, plan, certificate_limit, channel_limit, rate_limit, created_at, watch_limit)
     VALUES (?, 'Acme upgraded', 'enterprise', 100000, 1000, 6000, ?, 1000)`,
    [ORG, now - 60_000],
  );
  const ids = ["evt_upgradecursor0000a", "evt_upgradecursor0000b", "evt_upgradecursor0000c"];
  for (const [i, id] of ids.entries()) {
    await old.execute(`INSERT INTO events (id, organization_id, mode, type, certificate_id, data, created_at) VALUES (?, ?, 'live', 'test', NULL, '{}', ?)`, [
      id,
      ORG,
      now - 30_000 + i,
    ]);
  }
  // What fcf7372's GET /v1/events?limit=1 answered as meta.nextCursor: the page's last event's seq.
  const newest = await old.execute("SELECT seq FROM events WHERE id = ?", [ids[2]!]);
  const oldCursor = Buffer.from(JSON.stringify([Number(newest.rows[0]!.seq)])).toString("base64url");
  await old.close();

  const h = await createHarness({ store: await openLibsqlStore({ url }) });
  try {
    const { key } = await h.makeKey("owner", "live", ORG);
    const next = await h.request("GET", `/v1/events?limit=1&cursor=${oldCursor}`, { key });
    expect({ status: next.status, error: next.body?.error?.code ?? null }).toEqual({ status: 200, error: null });
    expect(next.body.data.map((event: { id: string }) => event.id)).toEqual([ids[1]]);
  } finally {
    await h.close();
  }
});
