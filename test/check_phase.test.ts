/**
 * When a certificate is next re-checked (core/monitor/check_phase.ts through applyCheck): never later
 * than one interval after its last check, and on a phase of its own, so that certificates added or
 * imported together do not come due together every interval after (a wave that stalls the API).
 */
import { describe, expect, test } from "bun:test";
import { applyCheck } from "../core/monitor/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR, SECOND } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";
import { seededRandom } from "./support/simulated_internet.ts";
import { BASE62 } from "../core/base/mod.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const INTERVAL = 10 * SECOND;
/** Where crt_0123456789abcdefghij's check falls in a 10-second interval after 2026-11-27T12:00:00Z. */
const PINNED_PHASE_DELAY = 8_500;
const policy = { intervalMs: INTERVAL, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

const served = servedOutcome;

/**
 * 500 certificates of a 90-day leaf, as an import adds them: first checked in the same second. Their
 * ids look like real ones (20 base62 characters) but are the same in every run: how evenly phases
 * spread is then a fact about these ids, not a chance (with fresh random ids, one run in a few
 * hundred put more than 15 of 500 in one tenth of a second).
 */
function imported(count = 500): Array<{ record: CertificateRecord; details: CertificateDetails }> {
  const random = seededRandom(500);
  return Array.from({ length: count }, (_, i) => {
    const id = `cert_${Array.from({ length: 20 }, () => BASE62[Math.floor(random() * 62)]).join("")}`;
    const details = certificateDetails(`host${i}.example.com`, { notAfter: NOW + 60 * DAY, notBefore: NOW - 30 * DAY });
    return { record: certificateRecord(scope, { id, domain: `host${i}.example.com`, details, alertThresholds: [] }), details };
  });
}

describe("the next re-check", () => {
  test("certificates checked together spread over the whole interval, each checked again within one interval", () => {
    const firsts = imported().map(({ record, details }, i) => {
      const at = NOW + (i % 7); // within a few milliseconds of each other
      return { at, next: applyCheck(record, served(details), at, policy, { isNew: true }).record.nextCheckAt };
    });
    for (const { at, next } of firsts) {
      expect(next).toBeGreaterThan(at);
      expect(next).toBeLessThanOrEqual(at + INTERVAL);
    }
    // Spread in tenths of a second: 100 in the interval, 5 each on average.
    const tenths = new Map<number, number>();
    for (const { next } of firsts) tenths.set(Math.floor(next / 100), (tenths.get(Math.floor(next / 100)) ?? 0) + 1);
    expect(tenths.size).toBeGreaterThanOrEqual(95);
    expect(Math.max(...tenths.values())).toBeLessThanOrEqual(15);
  });

  test("once on its phase, a certificate is checked exactly one interval after the last, however late the check ran", () => {
    for (const { record, details } of imported(50)) {
      let current = applyCheck(record, served(details), NOW, policy, { isNew: true }).record;
      const phase = current.nextCheckAt;
      for (let round = 0; round < 5; round++) {
        // The check runs a little after it was due (a queue, a slow server): the next one does not drift.
        const ranAt = current.nextCheckAt + 37 * round;
        current = applyCheck(current, served(details), ranAt, policy).record;
        expect(current.nextCheckAt).toBe(phase + (round + 1) * INTERVAL);
        expect(current.nextCheckAt - ranAt).toBeLessThanOrEqual(INTERVAL);
      }
    }
  });

  test("the phase is the certificate's own: the same in every process, different between certificates", () => {
    const [a, b] = imported(2);
    const first = applyCheck(a!.record, served(a!.details), NOW, policy, { isNew: true }).record.nextCheckAt;
    expect(applyCheck(a!.record, served(a!.details), NOW, policy, { isNew: true }).record.nextCheckAt).toBe(first);
    expect(applyCheck(b!.record, served(b!.details), NOW, policy, { isNew: true }).record.nextCheckAt).not.toBe(first);
  });

  test("a CA whose renewal information may be asked again just after the phase (Retry-After = the interval) is asked at every check", () => {
    const hours = { ...policy, intervalMs: 6 * HOUR };
    const { record, details } = imported(1)[0]!;
    const answered = (at: number) => ({ window: { start: NOW + 40 * DAY, end: NOW + 45 * DAY }, explanationUrl: null, checkedAt: at, requestedEnd: null, nextAt: at + 6 * HOUR, lastError: null });
    let current = applyCheck(record, served(details), NOW, hours, { isNew: true }).record;
    let asked = 0;
    for (let round = 0; round < 40; round++) {
      // The check starts a little late (the scheduler's look at the store); the CA answers after the
      // handshake, 80–300 ms in, and says when to ask again: 6 hours after its answer.
      const startedAt = current.nextCheckAt + ((round * 37) % 250);
      const previous = current.details.renewalInfo;
      const asks = !previous || startedAt >= previous.nextAt;
      if (asks) asked++;
      const seen = asks ? { ...details, renewalInfo: answered(startedAt + 80 + ((round * 53) % 220)) } : current.details;
      const savedAt = startedAt + 400;
      const next = applyCheck(current, served(seen), savedAt, hours).record;
      expect(next.nextCheckAt).toBeGreaterThan(savedAt);
      expect(next.nextCheckAt).toBeLessThanOrEqual(savedAt + 6 * HOUR);
      // On a tenth of a second, as every phase: leased and saved with the others due then.
      expect(next.nextCheckAt % 100).toBe(0);
      current = next;
    }
    // Every check but the few where the moves added up past their slack (each then back on its phase).
    expect(asked).toBeGreaterThanOrEqual(38);
  });

  test("the phase of an id stays the same from one release to the next", () => {
    const record = { ...imported(1)[0]!.record, id: "crt_0123456789abcdefghij" };
    const at = Date.UTC(2026, 10, 27, 12, 0, 0);
    expect(applyCheck(record, served(record.details), at, policy, { isNew: true }).record.nextCheckAt - at).toBe(PINNED_PHASE_DELAY);
  });

  test("a short lifetime's own interval is phased too, and a deadline still gets its own check", () => {
    // A 24-hour leaf: checked every 2 hours (a twelfth), under a 6-hour interval.
    const hours = { ...policy, intervalMs: 6 * HOUR };
    for (const { record } of imported(20)) {
      const details = certificateDetails(record.domain, { notBefore: NOW - HOUR, notAfter: NOW + 23 * HOUR });
      const next = applyCheck({ ...record, details }, served(details), NOW, hours, { isNew: true }).record.nextCheckAt;
      expect(next).toBeGreaterThan(NOW);
      expect(next).toBeLessThanOrEqual(NOW + 2 * HOUR);
    }
    // A leaf whose renewal deadline (two thirds of its life: 16 h after notBefore) is sooner than its phase.
    const { record } = imported(1)[0]!;
    const details = certificateDetails(record.domain, { notBefore: NOW - 16 * HOUR + 30 * SECOND, notAfter: NOW + 8 * HOUR + 30 * SECOND });
    const next = applyCheck({ ...record, details }, served(details), NOW, hours, { isNew: true }).record.nextCheckAt;
    expect(next).toBeLessThanOrEqual(NOW + 30 * SECOND);
  });
});
