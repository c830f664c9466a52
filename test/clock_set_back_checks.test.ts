/**
 * Every certificate's next check is a wall-clock moment in the database, chosen as the last check plus
 * the interval. After the wall clock is set back a day (NTP correcting a clock that ran a day ahead),
 * checks resume within the check interval (plus a lease) of the corrected clock, not a day later, and
 * a restart meanwhile changes nothing. The clock here steps (its now() jumps) while its sleeps run on
 * elapsed time, as setTimeout's do.
 */
import { expect, test } from "bun:test";
import { createCore, DEFAULT_CONFIG, silentLogger } from "../core/mod.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import type { CertificateSource } from "../core/monitor/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { certificateRecord, organizationRecord } from "./support/store_conformance/mod.ts";
import { SteppingClock } from "./support/fake_clock.ts";

async function world(options: { notAfterIn?: number } = {}) {
  const clock = new SteppingClock(Date.now());
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const record = certificateRecord(scope, {
    nextCheckAt: clock.now() - 1000,
    lastCheckedAt: clock.now() - 6 * HOUR,
    notBefore: clock.now() - 10 * DAY,
    notAfter: clock.now() + (options.notAfterIn ?? 80 * DAY),
  });
  await store.certificates.insert(record, { limit: 10, events: [] });
  const checks: number[] = [];
  const source: CertificateSource = {
    async inspect(_target, known) {
      checks.push(clock.now());
      return { ok: true, fingerprint: known!.fingerprint, details: known!.details, problem: known!.problem, tls: null, endpoints: [], at: clock.now() } as any;
    },
  };
  const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, checkIntervalMs: 6 * HOUR, revocation: false, ari: false, allowPrivateTargets: true };
  const startCore = () => {
    const core = createCore({ config, store, clock, logger: silentLogger, source });
    core.start();
    return core;
  };
  const core = startCore();
  for (let i = 0; i < 200 && checks.length === 0; i++) await Bun.sleep(5);
  expect(checks.length).toBe(1);
  await Bun.sleep(100); // its save
  return { clock, core, checks, store, startCore, id: record.id };
}

/** Lets `ms` of time pass in one-minute steps, giving the loop a turn at each. */
async function pass(clock: SteppingClock, ms: number, stopWhen: () => boolean): Promise<void> {
  for (let t = 0; t < ms && !stopWhen(); t += MINUTE) {
    clock.advance(MINUTE);
    await Bun.sleep(2);
  }
}

test("control: without a step, the certificate is checked again within the interval plus a lease", async () => {
  const { clock, core, checks } = await world();
  await pass(clock, 6 * HOUR + 10 * MINUTE, () => checks.length >= 2);
  await core.stop();
  expect(checks.length).toBe(2);
});

test("after the wall clock steps back a day, the certificate is checked again within the interval plus a lease (not a day later)", async () => {
  const { clock, core, checks } = await world();
  clock.step(-DAY);
  await pass(clock, 6 * HOUR + 10 * MINUTE, () => checks.length >= 2);
  await core.stop();
  expect(checks.length).toBe(2);
});

test("after the wall clock steps back a day and a restart, the certificate is checked again within the interval plus a lease", async () => {
  const { clock, core, checks, startCore } = await world();
  clock.step(-DAY);
  await core.stop();
  const restarted = startCore(); // the start's cap (last check + interval) does not help: the last check is a day ahead too
  await pass(clock, 6 * HOUR + 10 * MINUTE, () => checks.length >= 2);
  await restarted.stop();
  expect(checks.length).toBe(2);
});
