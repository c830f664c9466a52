/**
 * A certificate the scheduler leased ahead of its slots is checked inside its lease or not at all: one
 * that waited half its lease for a slot (overload) is handed back, due again when the lease runs out,
 * so another process that leases it then never checks it at the same time as this one. On stop, the
 * ones it will not check (never started, or given up while they waited for connections) are given
 * back at once: another process, or this one restarted, checks them now, not when the lease runs out.
 */
import { expect, test } from "bun:test";
import { createCore, DEFAULT_CONFIG, silentLogger } from "../core/mod.ts";
import type { CertificateSource } from "../core/monitor/mod.ts";
import { LEASE_MS } from "../core/config/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { CheckCancelled } from "../core/tls/endpoint_retrieve.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { certificateRecord, organizationRecord } from "./support/store_conformance/mod.ts";

async function until(condition: () => boolean, clock?: FakeClock): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) {
    await Bun.sleep(10);
    // The loop's sleeps are on the fake clock: a nudge wakes one begun after the last move.
    clock?.advance(1000);
  }
}

/**
 * A running core with one check slot (so two certificates are leased ahead of it; a 10 s TLS timeout
 * makes the lease LEASE_MS) over `count` due certificates. The first check hangs until `release()`;
 * each ends in an error (nothing saved: its lease runs out). `asked` lists the domains checked, in order.
 */
async function oneSlot(count: number, hang: "until released" | "until stopped" = "until released") {
  const clock = new FakeClock(Date.now());
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const domains: string[] = [];
  for (let i = 0; i < count; i++) {
    const record = certificateRecord(scope, { nextCheckAt: clock.now() - 1000 + i });
    await store.certificates.insert(record, { limit: 10, events: [] });
    domains.push(record.domain);
  }
  const asked: string[] = [];
  let release!: () => void;
  const hanging = new Promise<void>((resolve) => (release = resolve));
  const source: CertificateSource = {
    async inspect(target, _known, options) {
      asked.push(target.domain);
      if (hang === "until stopped") {
        // As a check waiting for connections does: it gives up when the scheduler stops.
        await new Promise((resolve) => options?.cancel?.addEventListener("abort", resolve, { once: true }));
        throw new CheckCancelled(target.domain);
      }
      if (asked.length === 1) await hanging;
      throw new Error("unreachable");
    },
  };
  const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, checkConcurrency: 1, tlsTimeoutMs: 10_000, allowPrivateTargets: true };
  const core = createCore({ config, store, clock, logger: silentLogger, source });
  core.start();
  await until(() => asked.length === 1);
  return { clock, core, store, domains, asked, release };
}

test("a certificate leased ahead that waited half its lease for a slot is handed back, and checked once its lease has run out", async () => {
  const { clock, core, domains, asked, release } = await oneSlot(3);
  expect(asked).toEqual([domains[0]!]);

  // The slot frees after more than half the lease: the two waiting are not started...
  clock.advance(LEASE_MS / 2 + 1000);
  release();
  await Bun.sleep(200);
  expect(asked).toEqual([domains[0]!]);

  // ...and are checked once their lease has run out, as another process would lease them.
  clock.advance(LEASE_MS);
  await until(() => asked.includes(domains[1]!) && asked.includes(domains[2]!), clock);
  expect(asked.slice(1)).toEqual(expect.arrayContaining([domains[1], domains[2]]));
  await core.stop();
});

test("a certificate leased ahead that waited less than half its lease is started as soon as its slot frees", async () => {
  const { clock, core, domains, asked, release } = await oneSlot(2);
  clock.advance(LEASE_MS / 2 - 1000);
  release();
  await until(() => asked.length === 2);
  expect(asked).toEqual([domains[0]!, domains[1]!]);
  await core.stop();
});

/** What another process would lease now. */
async function dueForAnother(store: ReturnType<typeof createMemoryStore>, clock: FakeClock): Promise<Array<[string, number]>> {
  const leased = await store.certificates.claimDue({ owner: "proc_another", now: clock.now(), leaseUntil: clock.now() + LEASE_MS, limit: 10 });
  return leased.map((record): [string, number] => [record.domain, record.nextCheckAt]).sort((a, b) => a[1] - b[1]);
}

test("on stop, certificates leased ahead and never started are given back: due at once for another process, at their old next check", async () => {
  const { clock, core, store, domains, asked, release } = await oneSlot(3);
  const stopped = core.stop();
  release();
  await stopped;
  expect(asked).toEqual([domains[0]!]);
  // The one that ran (and failed) keeps its lease, as after any failed check; the two never started
  // are due at the next checks they had before the lease.
  expect(await dueForAnother(store, clock)).toEqual([
    [domains[1]!, clock.now() - 1000 + 1],
    [domains[2]!, clock.now() - 1000 + 2],
  ]);
});

test("on stop, a check given up while it waited for connections is given back too", async () => {
  const { clock, core, store, domains, asked } = await oneSlot(3, "until stopped");
  expect(asked).toEqual([domains[0]!]);
  await core.stop();
  expect((await dueForAnother(store, clock)).map(([domain]) => domain)).toEqual(domains);
});

test("a process that stopped answering (its word lapsed a minute ago) has its leased checks made by another at its next beat, not when their leases run out", async () => {
  const start = Date.now();
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const domains: string[] = [];
  for (let i = 0; i < 3; i++) {
    const record = certificateRecord(scope, { nextCheckAt: start - 1000 + i });
    await store.certificates.insert(record, { limit: 10, events: [] });
    domains.push(record.domain);
  }
  const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, checkConcurrency: 1, tlsTimeoutMs: 10_000, allowPrivateTargets: true };
  // A: leases all three, its check never ends, its clock stands still (nothing of it runs any more).
  let unfreeze!: () => void;
  const frozen = new Promise<void>((resolve) => (unfreeze = resolve));
  const askedOfDead: string[] = [];
  const dead = createCore({
    config,
    store,
    clock: new FakeClock(start),
    logger: silentLogger,
    source: {
      async inspect(target) {
        askedOfDead.push(target.domain);
        await frozen;
        throw new Error("gone");
      },
    },
  });
  dead.start();
  await until(() => askedOfDead.length === 1);
  // B: alive, on its own clock.
  const clock = new FakeClock(start);
  const asked: string[] = [];
  const alive = createCore({
    config,
    store,
    clock,
    logger: silentLogger,
    source: {
      async inspect(target) {
        asked.push(target.domain);
        throw new Error("unreachable");
      },
    },
  });
  alive.start();
  // Within the minute A's word lasts, its leases stand.
  for (let i = 0; i < 6; i++) {
    clock.advance(9_000);
    await Bun.sleep(10);
  }
  expect(asked).toEqual([]);
  // Past it, B's next beat gives them back and B checks them, long before the leases (2 minutes here) run out.
  clock.advance(15_000);
  for (let i = 0; i < 40 && asked.length < 3; i++) {
    await Bun.sleep(10);
    clock.advance(500);
  }
  expect([...asked].sort()).toEqual([...domains].sort());
  expect(clock.now() - start).toBeLessThan(90_000);
  expect(askedOfDead).toEqual([domains[0]!]);
  await alive.stop();
  unfreeze();
  await dead.stop();
});
