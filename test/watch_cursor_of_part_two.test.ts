/**
 * A watch polled last by the release before Part III (schema 7) kept the search
 * service's id as its cursor, untagged (cursors name their source since 9c564b9). An operator who
 * upgrades and turns on CERTKEEPER_CT_SOURCE=logs in the same restart (docs/ct-logs.md: "No third party,
 * no query quota") expects what docs/ct-logs.md says of a switch to `logs`: "a watch's next poll reads
 * the logs' records of it from their start (for autoMonitor and pending deployments)"; and, of an
 * upgrade, that a watch keeps its place "only if the source is unchanged at the upgrade".
 *
 * The untagged Cert Spotter id is read instead as a position among the follower's records
 * (`seq > 4325180193`): no record is ever after it, so autoMonitor adds nothing for that watch and
 * pending deployments are never found, silently (the follower's events still come, so nothing looks
 * wrong). Exactly what 9c564b9 fixed for a switch made on a current version.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate } from "../adapters/sql/migrations.ts";
import { RecordedIssuances } from "../core/ctlogs/recorded_issuances.ts";
import { WatchPoller } from "../core/watches/mod.ts";
import { createLogger } from "../core/base/log.ts";
import { systemClock } from "../core/base/time.ts";
import { DAY } from "../core/base/mod.ts";
import { executorOver } from "./support/executor_over.ts";

/** The schema of the release before Part III (before alert policies; cursors then named no source). */
const PART_II_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-untagged-cursor-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a watch last polled by the Part II release (untagged search cursor), upgraded with CERTKEEPER_CT_SOURCE=logs: autoMonitor reads the logs' records from their start", async () => {
  const url = `file:${join(dir, "v7.db")}`;
  const old = executorOver(createClient({ url }));
  await migrate(old, { until: PART_II_SCHEMA });
  const now = Date.now();
  await old.execute(
    `INSERT INTO organizations (id, name, plan, certificate_limit, channel_limit, rate_limit, created_at, watch_limit)
     VALUES ('org_partii', 'Acme', 'pro', 100, 10, 600, ?, 10)`,
    [now - 30 * DAY],
  );
  // The row as the Part II poller left it after a few polls of Cert Spotter: its last issuance id as
  // the cursor (Cert Spotter's ids are large increasing decimals), baseline done, autoMonitor on.
  await old.execute(
    `INSERT INTO watches (id, organization_id, mode, domain, include_subdomains, auto_monitor, allowed_issuers, last_polled_at,
       last_error, issuances_seen, cursor, baseline_done, pending_names, next_poll_at, lease_owner, created_at, updated_at)
     VALUES ('wch_partii', 'org_partii', 'live', 'shop.example', 1, 1, '[]', ?, NULL, 12, '4325180193', 1, '[]', 0, NULL, ?, ?)`,
    [now - 3_600_000, now - 30 * DAY, now - 3_600_000],
  );
  await old.close();

  // The current version opens it (migrating) and follows the logs: the follower records an issuance
  // of a new name under the watch.
  const store = await openLibsqlStore({ url });
  try {
    await store.ctLogs.recordSearched(
      [
        {
          watchId: "wch_partii",
          issuanceKey: "ab".repeat(32),
          dnsNames: ["new.shop.example"],
          issuerOrganization: "Let's Encrypt",
          issuerCommonName: "R11",
          notBefore: now - DAY,
          notAfter: now + 60 * DAY,
          fingerprint: "cd".repeat(32),
          loggedAt: now - DAY,
        },
      ],
      now,
    );
    const added: string[] = [];
    const poller = new WatchPoller({
      store,
      clock: systemClock,
      logger: createLogger("error"),
      client: new RecordedIssuances(store.ctLogs),
      recordsIssuances: false,
      intervalMs: 3_600_000,
      owner: "proc_new",
      leaseMs: 60_000,
      pollMs: 1_000,
      addCertificate: async (_watch, name) => {
        added.push(name);
        return true;
      },
    });
    const claimed = (await store.watches.claimDue({ owner: "proc_new", now: now + 1, leaseUntil: now + 60_000, limit: 10 })).find((w) => w.id === "wch_partii");
    expect(claimed).toBeDefined();
    expect(await poller.poll(claimed!)).toBe("ok");
    // Expected: the name the logs recorded is monitored, as after a switch made on this version.
    expect(added).toEqual(["new.shop.example"]);
  } finally {
    await store.close();
  }
});
