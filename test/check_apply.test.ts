/**
 * applyCheck, the pure meaning of one check (core/monitor/check_apply.ts): the announcement rules that
 * are hard to reach through a real server in one test, such as a node flipping between certificates.
 */
import { describe, expect, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { caaBlocksRenewal } from "../core/renewal/mod.ts";
import type { CertificateDetails, CertificateRecord, RevocationState } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW, servedOutcome } from "./support/store_conformance/factories.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };
const policy = { intervalMs: HOUR, alertPolicy: "days" as const, failuresBeforeUnreachable: 1, retryDelaysMs: [] };

const revocation = (status: RevocationState["status"]): RevocationState => ({
  status,
  source: status === "not_checked" ? null : "ocsp",
  checkedAt: NOW,
  revokedAt: status === "revoked" ? NOW - DAY : null,
  reason: status === "revoked" ? "keyCompromise" : null,
  validUntil: null,
});

const served = servedOutcome;

describe("applyCheck: certificate.revoked", () => {
  test("a host alternating between a revoked old certificate and a new one announces the revoked serial once (CONTRACT §14)", () => {
    const domain = "flip.example.com";
    const old = certificateDetails(domain, { notAfter: NOW + 40 * DAY, revocation: revocation("revoked") });
    const fresh = certificateDetails(domain, { notAfter: NOW + 80 * DAY, revocation: revocation("good") });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: old, alertThresholds: [] });
    let applied = applyCheck(record, served(old), NOW, policy, { isNew: true });
    const types: string[] = applied.events.map((e) => e.type);
    record = applied.record;
    for (let i = 1; i <= 12; i++) {
      applied = applyCheck(record, served(i % 2 === 1 ? fresh : old), NOW + i * HOUR, policy);
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    }
    expect(types.filter((t) => t === "certificate.revoked")).toEqual(["certificate.revoked"]);
  });

  test("many revoked serials in rotation are each announced once", () => {
    const domain = "rotate.example.com";
    const leaves = Array.from({ length: 12 }, (_, i) =>
      certificateDetails(domain, { notAfter: NOW + (40 + i) * DAY, revocation: revocation("revoked") }),
    );
    let record: CertificateRecord = certificateRecord(scope, { domain, details: leaves[0]!, alertThresholds: [] });
    const revoked: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [i, leaf] of leaves.entries()) {
        const applied = applyCheck(record, served(leaf), NOW + (round * 12 + i) * HOUR, policy, { isNew: round === 0 && i === 0 });
        revoked.push(...applied.events.filter((e) => e.type === "certificate.revoked").map((e) => (e.data.certificate as { serialNumber: string }).serialNumber));
        record = applied.record;
      }
    }
    expect(revoked.length).toBe(12);
    expect(new Set(revoked).size).toBe(12);
  });
});

describe("applyCheck: certificate.chain_expiring", () => {
  test("a node whose leaf expires later but whose intermediate expires first announces it once per threshold, naming the endpoint", () => {
    const domain = "twonodes.example.com";
    const first = certificateDetails(domain, { notAfter: NOW + 40 * DAY });
    const intermediate = { subject: "Short CA", issuer: "Root", serialNumber: "AB:CD", notAfter: NOW + 20 * DAY + HOUR };
    const second = { ...certificateDetails(domain, { notAfter: NOW + 90 * DAY }), chainExpiry: intermediate };
    const outcome: CheckOutcome = {
      ok: true,
      fingerprint: "both",
      details: first,
      problem: null,
      endpoints: [
        { address: "127.0.0.1", fingerprint: "a", details: first, problem: null, failure: null, tls: null },
        { address: "127.0.0.2", fingerprint: "b", details: second, problem: null, failure: null, tls: null },
      ],
    };
    let record: CertificateRecord = certificateRecord(scope, { domain, details: first });
    const chainEvents: Array<Record<string, unknown>> = [];
    // Every six hours for 10 days: the intermediate crosses 30 (at once) and 14 (after 6 days).
    for (let at = NOW, i = 0; at <= NOW + 10 * DAY; at += 6 * HOUR, i++) {
      const applied = applyCheck(record, outcome, at, policy, { isNew: i === 0 });
      chainEvents.push(...applied.events.filter((e) => e.type === "certificate.chain_expiring").map((e) => e.data));
      record = applied.record;
    }
    expect(chainEvents.map((d) => [d.threshold, d.chainCertificate, d.endpoint])).toEqual([
      [30, { subject: "Short CA", issuer: "Root", serialNumber: "AB:CD", expiresAt: new Date(intermediate.notAfter).toISOString() }, { address: "127.0.0.2", serialNumber: second.serialNumber, expiresAt: new Date(second.notAfter).toISOString() }],
      [14, expect.objectContaining({ serialNumber: "AB:CD" }), expect.objectContaining({ address: "127.0.0.2" })],
    ]);
    // The status says so too (the worst endpoint first).
    expect((chainEvents[0]!.certificate as { status: string; statusReason: string })).toMatchObject({ status: "expiring", statusReason: "chain_expiring" });
  });
});

describe("applyCheck: certificate.renewal_blocked (CONTRACT §22)", () => {
  const domain = "mx.example.com";
  const forbidden = (key: string): NonNullable<CertificateRecord["dns"]> => ({
    caa: {
      status: "forbidden",
      issuerDomain: "letsencrypt.org",
      blocking: { name: domain, setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], key },
    },
  });
  const permitted: NonNullable<CertificateRecord["dns"]> = { caa: { status: "permitted", issuerDomain: "letsencrypt.org", blocking: null } };
  const withDns = (details: CertificateDetails, dns: CertificateRecord["dns"], caaAnswered = true): CheckOutcome => ({
    ...(served(details) as Extract<CheckOutcome, { ok: true }>),
    dns: dns!,
    caaAnswered,
  });

  test("once per serial and record set: again for another set, again for a renewed serial, never for a permitted one", () => {
    const first = certificateDetails(domain, { notAfter: NOW + 40 * DAY });
    const renewed = certificateDetails(domain, { notAfter: NOW + 80 * DAY });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: first, alertThresholds: [] });
    const steps: Array<[CertificateDetails, CertificateRecord["dns"]]> = [
      [first, forbidden("a")],
      [first, forbidden("a")],
      [first, permitted],
      [first, forbidden("a")],
      [first, forbidden("b")],
      [renewed, forbidden("b")],
      [renewed, forbidden("b")],
    ];
    const announced: string[] = [];
    for (const [i, [details, dns]] of steps.entries()) {
      const applied = applyCheck(record, withDns(details, dns), NOW + i * HOUR, policy, { isNew: i === 0 });
      for (const event of applied.events.filter((e) => e.type === "certificate.renewal_blocked")) {
        announced.push(`${i}:${(event.data.certificate as { serialNumber: string }).serialNumber === first.serialNumber ? "first" : "renewed"}:${(event.data.caa as { records: string[] }).records[0]}`);
      }
      record = applied.record;
    }
    expect(announced).toEqual(['0:first:0 issue "digicert.com"', '4:first:0 issue "digicert.com"', '5:renewed:0 issue "digicert.com"']);
  });

  test("a verdict kept through a DNS failure raises nothing, even for a new serial; the findings stay", () => {
    const first = certificateDetails(domain, { notAfter: NOW + 40 * DAY });
    const renewed = certificateDetails(domain, { notAfter: NOW + 80 * DAY });
    const record = certificateRecord(scope, { domain, details: first, alertThresholds: [] });
    const applied = applyCheck(record, withDns(renewed, forbidden("a"), false), NOW, policy);
    expect(applied.events.map((e) => e.type)).toEqual(["certificate.renewed"]);
    // The verdict the renewal-deadline status rule reads from the stored record.
    expect([caaBlocksRenewal(applied.record), caaBlocksRenewal(record)]).toEqual([true, false]);
    // A check that looked nothing up (DNS off, or a failed retrieval) keeps what was found.
    const unreachable = applyCheck(applied.record, { ok: false, reason: "timeout", message: "no answer" }, NOW + HOUR, policy);
    expect(unreachable.record.dns).toBe(applied.record.dns);
    const plain = applyCheck(applied.record, served(renewed), NOW + 2 * HOUR, policy);
    expect(plain.record.dns).toBe(applied.record.dns);
  });
});

describe("applyCheck: expiry under the renewal policy", () => {
  test("a CA whose suggested window ends after the certificate expires: the deadline is the expiry, and a check is due at the expiry whatever the window says", () => {
    const domain = "late-window.example.com";
    // 90 days, 2 hours left: a twelfth of the lifetime (7.5 days) would check long after the expiry.
    const notBefore = NOW - 90 * DAY + 2 * HOUR;
    const notAfter = NOW + 2 * HOUR;
    // An ARI answer whose window ends a week after notAfter (a CA that lies, or a bug of its own).
    const renewalInfo = { window: { start: notAfter - DAY, end: notAfter + 7 * DAY }, explanationUrl: null, checkedAt: NOW, requestedEnd: null, nextAt: NOW + 30 * DAY, lastError: null };
    const details = certificateDetails(domain, { notBefore, notAfter, renewalInfo });
    const renewalPolicy = { ...policy, intervalMs: 30 * DAY, alertPolicy: "renewal" as const };
    const record: CertificateRecord = certificateRecord(scope, { domain, details, alertThresholds: [], alertPolicy: "renewal" });
    const applied = applyCheck(record, served(details), NOW, renewalPolicy, { isNew: true });
    expect(applied.events.map((e) => e.type)).toEqual([]);
    // The next check is no later than the expiry (+1 ms: the first moment it is expired).
    expect(applied.record.nextCheckAt).toBeLessThanOrEqual(notAfter + 1);
    const expired = applyCheck(applied.record, served(details), notAfter + 1, renewalPolicy);
    expect(expired.events.map((e) => e.type)).toContain("certificate.expired");
  });
});

describe("applyCheck: a node that stops answering", () => {
  /** One check's outcome over `nodes` (address → leaf, or null for a node that did not answer). */
  const nodes = (entries: Array<[string, CertificateDetails | null]>): CheckOutcome => nodesOutcome(entries);

  /**
   * Checks `steps` one after the other (the first as the certificate's first check, each `gapMs` after
   * the last unless it gives its own offset), starting from `first`: each certificate.renewed as
   * [step index, the certificate-level serial, the previous serial].
   */
  function renewalsOver(
    first: CertificateDetails,
    steps: Array<Array<[string, CertificateDetails | null]> | [number, Array<[string, CertificateDetails | null]>]>,
    gapMs: number,
    checkPolicy = { ...policy, intervalMs: DAY },
  ): Array<[number, string, string]> {
    let record: CertificateRecord = certificateRecord(scope, { domain: first.subject, details: first, alertThresholds: [] });
    const renewals: Array<[number, string, string]> = [];
    steps.forEach((step, i) => {
      const [offset, entries] = typeof step[0] === "number" ? (step as [number, Array<[string, CertificateDetails | null]>]) : [i * gapMs, step as Array<[string, CertificateDetails | null]>];
      const applied = applyCheck(record, nodes(entries), NOW + offset, checkPolicy, { isNew: i === 0 });
      for (const e of applied.events.filter((e) => e.type === "certificate.renewed")) {
        renewals.push([i, (e.data.certificate as { serialNumber: string }).serialNumber, (e.data.previous as { serialNumber: string }).serialNumber]);
      }
      record = applied.record;
    });
    return renewals;
  }

  /**
   * Three nodes, each with its own leaf, checked once: the certificate-level leaf is .3's (`first`,
   * expiring in 50 minutes); .2's (`next`) expires in 3 hours; .3 renews to `renewed`.
   */
  function threeNodes(domain: string) {
    const later = certificateDetails(domain, { notBefore: NOW - 20 * DAY, notAfter: NOW + 40 * DAY });
    const next = certificateDetails(domain, { notBefore: NOW - 89 * DAY, notAfter: NOW + 3 * HOUR });
    const first = certificateDetails(domain, { notBefore: NOW - 90 * DAY, notAfter: NOW + 50 * 60_000 });
    const renewed = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const sixHours = { ...policy, intervalMs: 6 * HOUR };
    const initial: CertificateRecord = certificateRecord(scope, { domain, details: first, alertThresholds: [] });
    const record = applyCheck(initial, nodes([["192.0.2.1", later], ["192.0.2.2", next], ["192.0.2.3", first]]), NOW, sixHours, { isNew: true }).record;
    return { later, next, renewed, sixHours, record };
  }

  test("its leaf is still looked at when it expires, and its expiry is announced then, as no renewal", () => {
    const { later, next, renewed, sixHours, record: checked } = threeNodes("quiet-node.example.com");
    let record = checked;
    let applied;
    // An hour on: .3 has renewed, and .2 does not answer this once. The earliest leaf answering is .1's.
    applied = applyCheck(record, nodes([["192.0.2.1", later], ["192.0.2.2", null], ["192.0.2.3", renewed]]), NOW + HOUR, sixHours);
    expect(applied.events.map((e) => e.type)).toEqual(["certificate.renewed"]);
    record = applied.record;
    // .2 was serving a leaf that expires in two hours: the next check is no later than that.
    expect(record.nextCheckAt).toBeLessThanOrEqual(next.notAfter + 1);
    // Then .2 answers again, with its expired leaf: announced expired, and not as a renewal.
    applied = applyCheck(record, nodes([["192.0.2.1", later], ["192.0.2.2", next], ["192.0.2.3", renewed]]), next.notAfter + 1, sixHours);
    expect(applied.events.map((e) => [e.type, (e.data.certificate as { serialNumber: string }).serialNumber])).toEqual([["certificate.expired", next.serialNumber]]);
  });

  test("still silent when its leaf expires, back later with it: announced expired then, as no renewal", () => {
    const { later, next, renewed, sixHours, record: checked } = threeNodes("quiet-longer.example.com");
    let record = checked;
    const silent = nodes([["192.0.2.1", later], ["192.0.2.2", null], ["192.0.2.3", renewed]]);
    record = applyCheck(record, silent, NOW + HOUR, sixHours).record;
    // At its expiry .2 is still silent: nothing to see, nothing said.
    let applied = applyCheck(record, silent, next.notAfter + 1, sixHours);
    expect(applied.events).toEqual([]);
    record = applied.record;
    applied = applyCheck(record, nodes([["192.0.2.1", later], ["192.0.2.2", next], ["192.0.2.3", renewed]]), next.notAfter + 2 * HOUR, sixHours);
    expect(applied.events.map((e) => [e.type, (e.data.certificate as { serialNumber: string }).serialNumber])).toEqual([["certificate.expired", next.serialNumber]]);
  });

  test("the node of the newer, shorter-lived leaf falling silent is no renewal to the older one still served", () => {
    const domain = "quiet-newer.example.com";
    const older = certificateDetails(domain, { notBefore: NOW - 100 * DAY, notAfter: NOW + 298 * DAY }); // 398 days
    const newer = certificateDetails(domain, { notBefore: NOW - DAY, notAfter: NOW + 44 * DAY }); // 45 days
    const daily = { ...policy, intervalMs: DAY };
    let record: CertificateRecord = certificateRecord(scope, { domain, details: newer, alertThresholds: [] });
    const types: string[] = [];
    const steps: Array<Array<[string, CertificateDetails | null]>> = [
      [["192.0.2.1", older], ["192.0.2.2", newer]],
      [["192.0.2.1", older], ["192.0.2.2", null]],
      [["192.0.2.1", older], ["192.0.2.2", newer]],
      [["192.0.2.1", older], ["192.0.2.2", null]],
    ];
    steps.forEach((step, i) => {
      const applied = applyCheck(record, nodes(step), NOW + i * HOUR, daily, { isNew: i === 0 });
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    });
    expect(types).toEqual([]);
    // While .2 is silent the certificate-level leaf is .1's, as CONTRACT §11 says.
    expect(record.details.serialNumber).toBe(older.serialNumber);
  });

  test("a rollout whose last old node misses a check is announced once, when that node is back with the new leaf, gone, or silent too long", () => {
    const domain = "quiet-restart.example.com";
    const daily = { ...policy, intervalMs: DAY };
    const o = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
    const n = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const start: Array<Array<[string, CertificateDetails | null]>> = [[["192.0.2.1", o], ["192.0.2.2", o]], [["192.0.2.1", o], ["192.0.2.2", n]], [["192.0.2.1", null], ["192.0.2.2", n]]];
    const cases: Array<{ name: string; then: Array<[number, Array<[string, CertificateDetails | null]>]>; renewedAt: number }> = [
      { name: "back with the new leaf", then: [[3 * HOUR, [["192.0.2.1", n], ["192.0.2.2", n]]]], renewedAt: 3 * HOUR },
      { name: "no longer resolved", then: [[3 * HOUR, [["192.0.2.2", n]]]], renewedAt: 3 * HOUR },
      { name: "back with the old leaf, then the new", then: [[3 * HOUR, [["192.0.2.1", o], ["192.0.2.2", n]]], [4 * HOUR, [["192.0.2.1", n], ["192.0.2.2", n]]]], renewedAt: 4 * HOUR },
      { name: "silent for more than a day", then: [[3 * HOUR, [["192.0.2.1", null], ["192.0.2.2", n]]], [27 * HOUR, [["192.0.2.1", null], ["192.0.2.2", n]]]], renewedAt: 27 * HOUR },
    ];
    for (const { name, then, renewedAt } of cases) {
      const renewals = renewalsOver(o, [...start.map((step, i) => [i * HOUR, step] as [number, typeof step]), ...then], HOUR, daily);
      expect({ name, renewals }).toEqual({ name, renewals: [[start.length + then.findIndex(([at]) => at === renewedAt), n.serialNumber, o.serialNumber]] });
    }
  });

  test("a node back from silence with a certificate of its own, not the other's, is the renewal of its old one", () => {
    const domain = "quiet-own.example.com";
    const daily = { ...policy, intervalMs: DAY };
    const o = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
    const l = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const n = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const m = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 60 * DAY });
    const x = certificateDetails(domain, { notBefore: NOW - 120 * DAY, notAfter: NOW + 85 * DAY });
    const cases: Array<{ name: string; steps: Array<Array<[string, CertificateDetails | null]>>; renewedAt: number }> = [
      { name: "back with a later one", steps: [[["192.0.2.1", o], ["192.0.2.2", l]], [["192.0.2.1", null], ["192.0.2.2", l]], [["192.0.2.1", n], ["192.0.2.2", l]], [["192.0.2.1", n], ["192.0.2.2", l]]], renewedAt: 2 },
      { name: "back with an earlier-expiring one", steps: [[["192.0.2.1", o], ["192.0.2.2", l]], [["192.0.2.1", null], ["192.0.2.2", l]], [["192.0.2.1", m], ["192.0.2.2", l]]], renewedAt: 2 },
      { name: "the other serving an older one", steps: [[["192.0.2.1", o], ["192.0.2.2", x]], [["192.0.2.1", null], ["192.0.2.2", x]], [["192.0.2.1", n], ["192.0.2.2", x]]], renewedAt: 2 },
      { name: "a flap first", steps: [[["192.0.2.1", o], ["192.0.2.2", l]], [["192.0.2.1", null], ["192.0.2.2", l]], [["192.0.2.1", o], ["192.0.2.2", l]], [["192.0.2.1", n], ["192.0.2.2", l]], [["192.0.2.1", n], ["192.0.2.2", l]]], renewedAt: 3 },
    ];
    for (const { name, steps, renewedAt } of cases) {
      const renewals = renewalsOver(o, steps, 2 * HOUR, daily).map(([i, , previous]) => [i, previous]);
      expect({ name, renewals }).toEqual({ name, renewals: [[renewedAt, o.serialNumber]] });
    }
  });

  test("three nodes of their own falling silent in turn: the first leaf's replacement is announced once, when it happens", () => {
    const domain = "quiet-three.example.com";
    const daily = { ...policy, intervalMs: DAY };
    const o = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
    const x = certificateDetails(domain, { notBefore: NOW - 120 * DAY, notAfter: NOW + 85 * DAY });
    const l = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const n = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const at = (a: CertificateDetails | null, b: CertificateDetails | null, c: CertificateDetails | null): Array<[string, CertificateDetails | null]> => [["192.0.2.1", a], ["192.0.2.2", b], ["192.0.2.3", c]];
    const steps = [at(o, x, l), at(null, x, null), at(o, x, l), at(o, null, l), at(null, x, null), at(null, null, l), at(n, x, l), at(n, x, l), at(n, x, l)];
    expect(renewalsOver(o, steps, 6 * HOUR, daily)).toEqual([[6, l.serialNumber, o.serialNumber]]);
  });

  test("after every node fell silent, one back with its own leaf is no renewal of the other's", () => {
    const domain = "quiet-outage.example.com";
    const daily = { ...policy, intervalMs: DAY };
    const o = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
    const l = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const down = (address: string) => ({ address, fingerprint: null, details: null, problem: null, failure: "timeout" as const, tls: null });
    let record: CertificateRecord = certificateRecord(scope, { domain, details: o, alertThresholds: [] });
    const types: string[] = [];
    const outcomes: CheckOutcome[] = [
      nodes([["192.0.2.1", o], ["192.0.2.2", l]]),
      { ok: false, reason: "timeout", message: "no answer", endpoints: [down("192.0.2.1"), down("192.0.2.2")] },
      nodes([["192.0.2.1", null], ["192.0.2.2", l]]),
      nodes([["192.0.2.1", o], ["192.0.2.2", l]]),
    ];
    outcomes.forEach((outcome, i) => {
      const applied = applyCheck(record, outcome, NOW + i * HOUR, daily, { isNew: i === 0 });
      types.push(...applied.events.map((e) => e.type));
      record = applied.record;
    });
    expect(types).toEqual(["certificate.unreachable", "certificate.recovered"]);
    expect(record.details.serialNumber).toBe(o.serialNumber);
  });

  test("a failed lookup in between forgets no node: the silent node's leaf is still looked at", () => {
    const domain = "quiet-dns.example.com";
    const later = certificateDetails(domain, { notBefore: NOW - 20 * DAY, notAfter: NOW + 40 * DAY });
    const next = certificateDetails(domain, { notBefore: NOW - 89 * DAY, notAfter: NOW + 5 * HOUR });
    const first = certificateDetails(domain, { notBefore: NOW - 90 * DAY, notAfter: NOW + 50 * 60_000 });
    const renewed = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const monthly = { ...policy, intervalMs: 30 * DAY };
    let record: CertificateRecord = certificateRecord(scope, { domain, details: first, alertThresholds: [] });
    record = applyCheck(record, nodes([["192.0.2.1", later], ["192.0.2.2", next], ["192.0.2.3", first]]), NOW, monthly, { isNew: true }).record;
    // The name does not resolve once (declared at once under this policy), then resolves with .2 silent.
    record = applyCheck(record, { ok: false, reason: "dns_error", message: "no such name", endpoints: [] }, NOW + HOUR, monthly).record;
    record = applyCheck(record, nodes([["192.0.2.1", later], ["192.0.2.2", null], ["192.0.2.3", renewed]]), NOW + 2 * HOUR, monthly).record;
    expect(record.nextCheckAt).toBeLessThanOrEqual(next.notAfter + 1);
  });

  test("a renewal rolling out while a forgotten node comes back with an older leaf is still announced", () => {
    const domain = "quiet-rollout.example.com";
    const x = certificateDetails(domain, { notBefore: NOW - 150 * DAY, notAfter: NOW + 50 * DAY }); // 200 days
    const n = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 45 * DAY }); // its replacement, 45 days
    const s = certificateDetails(domain, { notBefore: NOW - 160 * DAY, notAfter: NOW + 60 * DAY }); // the forgotten node's
    const daily = { ...policy, intervalMs: DAY };
    const steps: Array<Array<[string, CertificateDetails | null]>> = [
      [["192.0.2.1", x], ["192.0.2.2", x], ["192.0.2.3", s]],
      [["192.0.2.1", x], ["192.0.2.2", x], ["192.0.2.3", null]],
      [["192.0.2.1", n], ["192.0.2.2", x], ["192.0.2.3", null]],
      [["192.0.2.1", null], ["192.0.2.2", null], ["192.0.2.3", s]],
      [["192.0.2.1", n], ["192.0.2.2", n], ["192.0.2.3", s]],
      [["192.0.2.1", n], ["192.0.2.2", n], ["192.0.2.3", n]],
    ];
    const renewals = renewalsOver(x, steps, HOUR, daily);
    // Once, from x to n, when no node serves x any more (the forgotten node serves its own): not at
    // the forgotten node's return.
    expect(renewals).toEqual([[4, n.serialNumber, x.serialNumber]]);
  });

  test("a renewal is announced however the nodes fall silent around it, and a silent node is no renewal", () => {
    const domain = "quiet-cases.example.com";
    const daily = { ...policy, intervalMs: DAY };
    const b = certificateDetails(domain, { notBefore: NOW - 40 * DAY, notAfter: NOW + 5 * DAY }); // 45 days
    // Its replacement, bought weeks ago and deployed now: an earlier notBefore than b's.
    const c = certificateDetails(domain, { notBefore: NOW - 60 * DAY, notAfter: NOW + 338 * DAY });
    const a = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const older = certificateDetails(domain, { notBefore: NOW - 200 * DAY, notAfter: NOW + 165 * DAY });
    const fresh = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const cases: Array<{ name: string; steps: Parameters<typeof renewalsOver>[1]; renewals: Array<[number, string, string]> }> = [
      {
        // Announced once the silent node is back with the new one, not while it is presumed to serve the old.
        name: "the old leaf's node silent at the switch",
        steps: [[["192.0.2.1", b], ["192.0.2.2", b]], [["192.0.2.1", c], ["192.0.2.2", null]], [["192.0.2.1", c], ["192.0.2.2", c]]],
        renewals: [[2, c.serialNumber, b.serialNumber]],
      },
      {
        name: "the new leaf's node silent when the rest switch",
        steps: [[["192.0.2.1", b], ["192.0.2.2", b]], [["192.0.2.1", b], ["192.0.2.2", c]], [["192.0.2.1", b], ["192.0.2.2", null]], [["192.0.2.1", c], ["192.0.2.2", null]], [["192.0.2.1", c], ["192.0.2.2", c]]],
        renewals: [[3, c.serialNumber, b.serialNumber]],
      },
      {
        name: "a node switching while the other falls silent, and back with the old",
        steps: [[["192.0.2.1", b], ["192.0.2.2", b]], [["192.0.2.1", null], ["192.0.2.2", c]], [["192.0.2.1", b], ["192.0.2.2", c]], [["192.0.2.1", c], ["192.0.2.2", c]]],
        renewals: [[3, c.serialNumber, b.serialNumber]],
      },
      {
        name: "the old leaf's nodes replaced while one is silent and a forgotten node serves its own",
        steps: [[["192.0.2.1", b], ["192.0.2.2", b], ["192.0.2.3", a]], [["192.0.2.1", null], ["192.0.2.2", null], ["192.0.2.3", a]], [["192.0.2.1", c], ["192.0.2.2", null], ["192.0.2.3", a]], [["192.0.2.1", c], ["192.0.2.2", c], ["192.0.2.3", a]]],
        renewals: [[3, a.serialNumber, b.serialNumber]],
      },
      {
        // (A change of CA: the certificate the other node served was issued long before the first's.)
        name: "the other node replacing its own while the first is silent, the first back with the new",
        steps: [[["192.0.2.1", b], ["192.0.2.2", older]], [["192.0.2.1", null], ["192.0.2.2", older]], [["192.0.2.1", null], ["192.0.2.2", fresh]], [["192.0.2.1", fresh], ["192.0.2.2", fresh]]],
        renewals: [[3, fresh.serialNumber, b.serialNumber]],
      },
      {
        name: "the other node replacing its own while the first stays silent a day",
        steps: [0, 6, 12, 18, 24, 30].map((hours, i) => [hours * HOUR, [["192.0.2.1", i === 0 ? b : null], ["192.0.2.2", i < 2 ? older : fresh]]] as [number, Array<[string, CertificateDetails | null]>]),
        renewals: [[5, fresh.serialNumber, b.serialNumber]],
      },
      {
        name: "a node flapping with the earlier-expiring leaf",
        steps: [[["192.0.2.1", a], ["192.0.2.2", b]], [["192.0.2.1", a], ["192.0.2.2", null]], [["192.0.2.1", a], ["192.0.2.2", b]], [["192.0.2.1", a], ["192.0.2.2", null]]],
        renewals: [],
      },
    ];
    for (const { name, steps, renewals } of cases) {
      // (The first check is the certificate's first: what it starts from is replaced by what it sees.)
      expect({ name, renewals: renewalsOver(b, steps, HOUR, daily) }).toEqual({ name, renewals });
    }
  });

  test("its leaf is remembered while it stays silent, and forgotten once it answers again", () => {
    const domain = "quiet-long.example.com";
    const a = certificateDetails(domain, { notBefore: NOW - 10 * DAY, notAfter: NOW + 80 * DAY });
    const b = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 8 * DAY + 5 * HOUR });
    // The certificate-level leaf, inside threshold 7 already; .3 renews it within the hour.
    const c = certificateDetails(domain, { notBefore: NOW - 85 * DAY, notAfter: NOW + 5 * DAY });
    const renewed = certificateDetails(domain, { notBefore: NOW, notAfter: NOW + 90 * DAY });
    const monthly = { ...policy, intervalMs: 30 * DAY };
    const crossing = b.notAfter - 8 * DAY + 1; // b's threshold 7
    let record: CertificateRecord = certificateRecord(scope, { domain, details: c, alertThresholds: [7] });
    record = applyCheck(record, nodes([["192.0.2.1", a], ["192.0.2.2", b], ["192.0.2.3", c]]), NOW, monthly, { isNew: true }).record;
    // .2 silent for several checks in a row: its leaf's threshold stays among the moments.
    for (let i = 1; i <= 3; i++) {
      record = applyCheck(record, nodes([["192.0.2.1", a], ["192.0.2.2", null], ["192.0.2.3", renewed]]), NOW + i * HOUR, monthly).record;
      expect(record.nextCheckAt).toBeLessThanOrEqual(crossing);
    }
    // It answers again: it is the certificate-level leaf, its threshold crossed at its moment.
    const applied = applyCheck(record, nodes([["192.0.2.1", a], ["192.0.2.2", b], ["192.0.2.3", renewed]]), crossing, monthly);
    expect(applied.events.map((e) => [e.type, e.data.threshold])).toEqual([["certificate.expiring", 7]]);
    expect(applied.record.alertMemory.silent ?? []).toEqual([]);
  });
});
