/**
 * A certificate's JSON text is rendered once and reused while nothing in it changes with time
 * (core/certificates/present.ts, certificateJson): at every moment it must be exactly the view
 * presentCertificate gives then, across every threshold, expiry and day boundary of the leaf, the
 * certificates above it and every endpoint, whether time moves forward, jumps, or goes back.
 */
import { describe, expect, test } from "bun:test";
import { DAY, type CertificateRecord, type Scope } from "../core/base/mod.ts";
import { certificateJson, presentCertificate } from "../core/certificates/present.ts";
import { renderedResult } from "../core/operations/operation.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";

const scope: Scope = { organizationId: "org_json", mode: "live" };

/** Deterministic pseudo-random numbers (a test that fails must fail again). */
function random(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const iso = (ms: number) => new Date(ms).toISOString();
// Not on a whole second: boundaries fall between the usual test times.
const LEAF_END = NOW + 45 * DAY + 12_345;
const CHAIN_END = NOW + 20 * DAY + 777;
const OTHER_END = NOW + 9 * DAY + 4_321;

const records: Record<string, () => CertificateRecord> = {
  "one leaf": () => certificateRecord(scope, { notBefore: NOW - 10 * DAY + 5, notAfter: LEAF_END }),
  "a certificate above the leaf expiring first": () => {
    const record = certificateRecord(scope, { notBefore: NOW - 10 * DAY, notAfter: LEAF_END });
    const details = certificateDetails(record.domain, {
      notBefore: NOW - 10 * DAY,
      notAfter: LEAF_END,
      chainExpiry: { subject: "Intermediate", issuer: "Root", serialNumber: "0C", notAfter: CHAIN_END },
    });
    details.chain[1] = { ...details.chain[1]!, validTo: iso(CHAIN_END) };
    return { ...record, details };
  },
  "two endpoints serving different leaves, one unreachable": () => withEndpoints(certificateRecord(scope, { notBefore: NOW - 10 * DAY, notAfter: LEAF_END, alertThresholds: [21, 5] })),
  // The certificate's status stays revoked while its endpoints' change.
  "revoked, its endpoints serving different leaves": () =>
    withEndpoints(
      certificateRecord(scope, {
        notBefore: NOW - 10 * DAY,
        notAfter: LEAF_END,
        revocation: { status: "revoked", source: "ocsp", checkedAt: NOW, revokedAt: NOW - DAY, reason: "keyCompromise", validUntil: NOW + DAY },
      }),
    ),
  "no alert thresholds": () => certificateRecord(scope, { notBefore: NOW - DAY, notAfter: LEAF_END, alertThresholds: [] }),
  "revoked": () => certificateRecord(scope, { notAfter: LEAF_END, revocation: { status: "revoked", source: "ocsp", checkedAt: NOW, revokedAt: NOW - DAY, reason: "keyCompromise", validUntil: NOW + DAY } }),
};

function withEndpoints(record: CertificateRecord): CertificateRecord {
  const other = certificateDetails(record.domain, { notBefore: NOW + 2 * DAY + 99, notAfter: OTHER_END });
  const endpoint = (address: string, details: CertificateRecord["details"] | null) => ({
    address,
    fingerprint: details?.fingerprintSha256 ?? null,
    details,
    problem: null,
    failure: details ? null : ("timeout" as const),
    tls: null,
  });
  return { ...record, endpoints: [endpoint("127.0.0.1", record.details), endpoint("127.0.0.2", other), endpoint("127.0.0.3", null)] };
}

/** Every moment at which something in the view could change, a millisecond either side, and random times between. */
function moments(record: CertificateRecord, next: () => number): number[] {
  const ends = [record.details.notAfter, record.details.notBefore, CHAIN_END, OTHER_END, NOW + 2 * DAY + 99];
  const times: number[] = [];
  for (const end of ends) {
    for (let days = -2; days <= 70; days++) for (const delta of [-1, 0, 1]) times.push(end - days * DAY + delta);
  }
  for (let i = 0; i < 400; i++) times.push(Math.floor(NOW - 15 * DAY + next() * 80 * DAY));
  return times.filter((t) => t > NOW - 15 * DAY && t < NOW + 65 * DAY);
}

describe("certificateJson", () => {
  for (const [name, make] of Object.entries(records)) {
    test(`${name}: the text at every moment is the view of that moment, time moving forward, jumping or going back`, () => {
      const record = deepFreeze(make());
      const next = random(name.length * 7919);
      const times = moments(record, next);
      const forward = [...times].sort((a, b) => a - b);
      const shuffled = [...times].sort(() => next() - 0.5);
      let changes = 0;
      let last = "";
      for (const now of [...forward, ...shuffled, ...forward.reverse()]) {
        const json = certificateJson(record, now);
        expect({ now, json }).toEqual({ now, json: JSON.stringify(presentCertificate(record, now)) });
        if (json !== last) changes++;
        last = json;
      }
      // The walk crossed day boundaries and status changes: the text did change along it.
      expect(changes).toBeGreaterThan(60);
    });
  }

  test("a record that is not frozen is rendered anew every time (it may still change)", () => {
    const record = certificateRecord(scope, { notAfter: LEAF_END });
    expect(JSON.parse(certificateJson(record, NOW)).name).toBe("Main site");
    record.name = "Renamed";
    expect(JSON.parse(certificateJson(record, NOW)).name).toBe("Renamed");
  });
});

test("a time between whole milliseconds is rendered anew, never served a text rendered for a whole one", () => {
  const notAfter = NOW + 5_000;
  const record = deepFreeze(certificateRecord(scope, { notBefore: NOW - 1_000, notAfter }));
  // Rendered at expiry, reused until the next whole millisecond, at which it is expired.
  expect(JSON.parse(certificateJson(record, notAfter)).status).toBe("expiring");
  const between = notAfter + 0.5;
  expect(certificateJson(record, between)).toBe(JSON.stringify(presentCertificate(record, between)));
  expect(JSON.parse(certificateJson(record, between)).status).toBe("expired");
});

test("a rendered result shows an embedder its data (built once, when read) and cursor only; HTTP reads the text", () => {
  let built = 0;
  const result = renderedResult('{"id":"c1"}', () => (built++, { id: "c1" }), null);
  expect(built).toBe(0);
  expect(result.dataJson).toBe('{"id":"c1"}');
  expect(JSON.parse(JSON.stringify(result))).toEqual({ data: { id: "c1" }, nextCursor: null });
  expect(Object.keys(result).sort()).toEqual(["data", "nextCursor"]);
  expect(result.data).toBe(result.data);
  expect(built).toBe(1);
});
