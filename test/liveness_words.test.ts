/**
 * How processes running checks judge each other alive (core/monitor/liveness.ts), on the memory store
 * and the SQL store over a libSQL file: by words that change at each beat, judged on the reader's own
 * elapsed time. Processes whose wall clocks are far apart never take each other for dead; a process
 * whose give-back failed at stop keeps its word, which lapses, so that another gives its leases back
 * a minute later rather than when they run out; one that stopped cleanly is forgotten.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { silentLogger } from "../core/mod.ts";
import { BEAT_MS, createLiveness, type Liveness } from "../core/monitor/liveness.ts";
import type { Store } from "../core/store/ports.ts";
import { MINUTE, SECOND } from "../core/base/time.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { certificateRecord, organizationRecord } from "./support/store_conformance/mod.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

async function openStore(kind: "memory" | "libsql"): Promise<Store> {
  if (kind === "memory") return createMemoryStore();
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-liveness-"));
  const store = await openLibsqlStore({ url: `file:${join(dir, "test.db")}` });
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  return store;
}

/** A store with one certificate due at `at`, leased by `owner` for 12 minutes. */
async function oneLeased(store: Store, owner: string, at: number) {
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const record = certificateRecord(scope, { nextCheckAt: at - 1 });
  expect(await store.certificates.insert(record, { limit: 10, events: [] })).toBe("created");
  expect(await store.certificates.claimDue({ owner, now: at, leaseUntil: at + 12 * MINUTE, limit: 10 })).toHaveLength(1);
  return { scope, record, leasedUntil: at + 12 * MINUTE };
}

/** A process's liveness on its own clock. */
function liveProcess(store: Store, owner: string, clock: FakeClock): Liveness {
  const liveness = createLiveness({ store, owner, clock, logger: silentLogger });
  cleanups.push(() => liveness.stop());
  return liveness;
}

/** One beat's time on `clock`, and time for the beat's store calls to end. */
async function beat(clock: FakeClock): Promise<void> {
  clock.advance(BEAT_MS);
  await Bun.sleep(30);
}

for (const kind of ["memory", "libsql"] as const) {
  describe(`liveness (${kind} store)`, () => {
    test("clocks 50 s apart, beats falling anywhere: a live process is never taken for dead, its lease stays its own", async () => {
      const store = await openStore(kind);
      const start = Date.UTC(2026, 5, 1);
      const a = { clock: new FakeClock(start), owner: "proc_clockright0000" };
      const b = { clock: new FakeClock(start + 50 * SECOND), owner: "proc_clockahead0000" };
      const { scope, record, leasedUntil } = await oneLeased(store, a.owner, start);
      liveProcess(store, a.owner, a.clock).start();
      await Bun.sleep(30);
      b.clock.advance(12 * SECOND);
      liveProcess(store, b.owner, b.clock).start();
      await Bun.sleep(30);
      // Ten minutes of both beating, each on its own clock.
      for (let i = 0; i < 40; i++) await beat(i % 2 === 0 ? a.clock : b.clock);
      expect((await store.certificates.get(scope, record.id))?.nextCheckAt).toBe(leasedUntil);
    });

    test("a give-back that failed at stop leaves the word, which lapses: another process gives the lease back a minute later", async () => {
      const store = await openStore(kind);
      const start = Date.UTC(2026, 5, 1);
      const stopping = { clock: new FakeClock(start), owner: "proc_stopping000000" };
      const other = { clock: new FakeClock(start), owner: "proc_other000000000" };
      // Its checks were leased and not given back (the store refused the give-back at stop).
      const { scope, record, leasedUntil } = await oneLeased(store, stopping.owner, start);
      const gone = liveProcess(store, stopping.owner, stopping.clock);
      gone.start();
      const watcher = liveProcess(store, other.owner, other.clock);
      watcher.start();
      await Bun.sleep(30);
      await gone.stop();
      // Within the minute its last word lasts: still its lease.
      for (let i = 0; i < 3; i++) await beat(other.clock);
      expect((await store.certificates.get(scope, record.id))?.nextCheckAt).toBe(leasedUntil);
      await beat(other.clock);
      expect((await store.certificates.get(scope, record.id))?.nextCheckAt).toBe(other.clock.now());
    });

    test("a process that stopped with nothing leased is forgotten: no word of it is left to judge", async () => {
      const store = await openStore(kind);
      const clock = new FakeClock(Date.UTC(2026, 5, 1));
      const clean = liveProcess(store, "proc_clean000000000", clock);
      clean.start();
      await Bun.sleep(30);
      expect((await store.certificates.beat("proc_reader00000000")).map((word) => word.owner)).toContain("proc_clean000000000");
      await clean.stop();
      expect((await store.certificates.beat("proc_reader00000000")).map((word) => word.owner)).not.toContain("proc_clean000000000");
    });
  });
}
