/**
 * Processes sharing one database with different CERTKEEPER_CHECK_INTERVAL (a rolling change of it):
 * the next checks one plans under its longer interval are not taken for plans made on a clock since set
 * back by the other. Two processes, 24 h and 6 h, over 13 simulated hours: each certificate is checked
 * at most five times and about three in all (its phases under the two intervals differ, so two checks
 * may fall close together; taken for plans of a clock set back, the 24-hour plans were made due at once).
 */
import { expect, test } from "bun:test";
import { createCore, DEFAULT_CONFIG, silentLogger } from "../core/mod.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import type { CertificateSource } from "../core/monitor/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { certificateRecord, organizationRecord } from "./support/store_conformance/mod.ts";
import { SteppingClock } from "./support/fake_clock.ts";

test("two processes with 24 h and 6 h check intervals: each certificate checked a few times in 13 hours, not every minute", async () => {
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
  const counts = [...checks.values()].map((times) => times.length);
  const total = counts.reduce((sum, n) => sum + n, 0);
  console.log(`checks over 13 hours: ${counts.join(", ")} (${total})`);
  // The first check, then about one every 6 hours of either process's phase: 25–30 in all (taken for
  // plans of a clock since set back, the 24-hour plans were made due at once: 44–46).
  expect(counts).toHaveLength(10);
  expect(Math.max(...counts)).toBeLessThanOrEqual(5);
  expect(total).toBeLessThanOrEqual(36);
}, 120_000);
