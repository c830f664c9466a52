/**
 * Processes sharing one database with different CERTKEEPER_CHECK_INTERVAL (a rolling change of it):
 * the next checks one plans under its longer interval are not taken for plans made on a clock since set
 * back by the other. Two processes, 24 h and 6 h, over 13 simulated hours: no certificate is checked
 * twice within 30 minutes.
 */
import { expect, test } from "bun:test";
import { createCore, DEFAULT_CONFIG, silentLogger } from "../core/mod.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import type { CertificateSource } from "../core/monitor/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { certificateRecord, organizationRecord } from "./support/store_conformance/mod.ts";
import { SteppingClock } from "./support/fake_clock.ts";

test("two processes with 24 h and 6 h check intervals: no certificate is checked twice within 30 minutes", async () => {
  const clock = new SteppingClock(Date.now());
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const checks = new Map<string, number[]>();
  for (let i = 0; i < 10; i++) {
    const record = certificateRecord(scope, {
      nextCheckAt: clock.now() - 1000,
      lastCheckedAt: clock.now() - 6 * HOUR,
      notBefore: clock.now() - 10 * DAY,
      notAfter: clock.now() + 80 * DAY,
    });
    await store.certificates.insert(record, { limit: 100, events: [] });
  }
  const source: CertificateSource = {
    async inspect(target, known) {
      const id = (target as { id?: string }).id ?? JSON.stringify(target);
      checks.set(id, [...(checks.get(id) ?? []), clock.now()]);
      return { ok: true, fingerprint: known!.fingerprint, details: known!.details, problem: known!.problem, tls: null, endpoints: [], at: clock.now() } as any;
    },
  };
  const base = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, revocation: false, ari: false, allowPrivateTargets: true };
  const a = createCore({ config: { ...base, checkIntervalMs: 24 * HOUR }, store, clock, logger: silentLogger, source });
  a.start();
  for (let i = 0; i < 400 && [...checks.values()].length < 10; i++) await Bun.sleep(5);
  await Bun.sleep(100);
  const b = createCore({ config: { ...base, checkIntervalMs: 6 * HOUR }, store, clock, logger: silentLogger, source });
  b.start();
  for (let t = 0; t < 13 * HOUR; t += MINUTE) {
    clock.advance(MINUTE);
    await Bun.sleep(2);
  }
  await a.stop();
  await b.stop();
  let shortest = Infinity;
  for (const times of checks.values()) for (let i = 1; i < times.length; i++) shortest = Math.min(shortest, times[i]! - times[i - 1]!);
  const total = [...checks.values()].reduce((n, times) => n + times.length, 0);
  console.log(`checks: ${total} over ${checks.size} keys; shortest gap between two checks of one: ${shortest / MINUTE} min`);
  expect(shortest).toBeGreaterThanOrEqual(30 * MINUTE);
}, 120_000);
