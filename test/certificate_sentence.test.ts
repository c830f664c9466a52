/**
 * The one plain sentence a certificate's page opens with (CONTRACT §23): what is wrong and what to do,
 * for every statusReason of the contract, Part III's renewal reasons included; and the dashboard's
 * problems-first order.
 */
import { describe, expect, test } from "bun:test";
import { STATUS_REASONS } from "../core/base/records.ts";
import { explainCertificate, PROBLEM_GROUPS, problemRank, RENEWAL_REASONS, type ExplainedCertificate } from "../core/certificates/explain.ts";

const base: ExplainedCertificate = {
  domain: "mail.internal",
  port: 443,
  status: "valid",
  statusReason: null,
  daysUntilExpiry: 80,
  expiresAt: "2027-03-01T10:00:00.000Z",
  issuedAt: "2026-12-01T10:00:00.000Z",
  issuer: "Internal CA",
  subject: "app.internal",
  subjectAlternativeNames: ["app.internal"],
  chainExpiresAt: "2027-01-15T00:00:00.000Z",
  protocol: "tls",
  connectTo: null,
  endpoints: [],
};

const explain = (fields: Partial<ExplainedCertificate>) => explainCertificate({ ...base, ...fields });

describe("explainCertificate()", () => {
  test("a host name mismatch names what the certificate is for and what to install", () => {
    expect(explain({ status: "invalid", statusReason: "hostname_mismatch" })).toBe(
      "Serves a certificate for app.internal, not mail.internal: install a certificate that names mail.internal.",
    );
    expect(explain({ status: "invalid", statusReason: "hostname_mismatch", subjectAlternativeNames: ["a.internal", "b.internal", "c.internal", "d.internal"] })).toContain(
      "for a.internal, b.internal and 2 more, not mail.internal",
    );
  });

  test("day counts say what the rest of certkeeper says: -4 is 3 days ago, 0 is less than a day", () => {
    expect(explain({ status: "expired", statusReason: "expired", daysUntilExpiry: -4 })).toStartWith("Expired 3 days ago (2027-03-01 10:00 UTC)");
    expect(explain({ status: "expired", statusReason: "expired", daysUntilExpiry: -1 })).toStartWith("Expired less than a day ago");
    expect(explain({ status: "expiring", statusReason: "expiring_soon", daysUntilExpiry: 5 })).toBe(
      "Expires in 5 days (2027-03-01 10:00 UTC): renew it and install the new certificate before then.",
    );
    expect(explain({})).toBe("Valid, expires in 80 days (2027-03-01 10:00 UTC): nothing to do.");
  });

  test("every statusReason of the contract, and Part III's, has a sentence of its own that says what to do", () => {
    const reasons = [...new Set<string>([...STATUS_REASONS, ...RENEWAL_REASONS])];
    const sentences = new Map<string, string>();
    for (const reason of reasons) {
      const sentence = explain({ status: "invalid", statusReason: reason, renewal: { deadline: "2027-02-01T00:00:00.000Z", state: "overdue", window: { end: "2027-01-20T00:00:00.000Z" } } });
      expect({ reason, generic: sentence.includes("see the details below") }).toEqual({ reason, generic: false });
      expect({ reason, sentence }).toEqual({ reason, sentence: expect.stringMatching(/^[A-Za-z][^\n]+: [^\n]+\.$/) });
      expect(sentence).not.toMatch(/undefined|null|NaN|\[object/);
      sentences.set(reason, sentence);
    }
    expect(new Set(sentences.values()).size).toBe(reasons.length);
    expect(sentences.get("renewal_overdue")).toContain("Should have been renewed by 2027-02-01 00:00 UTC");
    expect(sentences.get("renewal_requested")).toContain("asks for this certificate to be replaced early, by 2027-01-20 00:00 UTC");
    expect(sentences.get("renewal_blocked")).toContain("CAA records do not allow its issuer (Internal CA)");
    expect(sentences.get("untrusted_issuer")).toContain("CERTKEEPER_EXTRA_CA_FILE");
    expect(sentences.get("dns_error")).toBe("The name mail.internal does not resolve: fix its DNS records (or give the address to connect to), then check again.");
  });

  test("a problem at some of several addresses names them", () => {
    const endpoints = [
      { address: "10.0.0.1", status: "valid", statusReason: null },
      { address: "10.0.0.2", status: "invalid", statusReason: "hostname_mismatch" },
    ];
    expect(explain({ status: "invalid", statusReason: "hostname_mismatch", endpoints })).toBe(
      "Serves a certificate for app.internal, not mail.internal (at 10.0.0.2): install a certificate that names mail.internal.",
    );
  });

  test("a reason this build does not know yet still gives a sentence, never a crash", () => {
    expect(explain({ status: "expiring", statusReason: "something_new" })).toBe("Is expiring (something new): see the details below.");
  });
});

describe("the problems-first order", () => {
  test("expired, revoked, unreachable, invalid, renewal overdue or requested, expiring, valid", () => {
    expect(PROBLEM_GROUPS.map((group) => group.name)).toEqual(["expired", "revoked", "unreachable", "invalid", "renewal overdue or requested", "expiring", "valid"]);
    const ranked = [
      { status: "valid", statusReason: null },
      { status: "expiring", statusReason: "expiring_soon" },
      { status: "expiring", statusReason: "renewal_requested" },
      { status: "expiring", statusReason: "chain_expiring" },
      { status: "expiring", statusReason: "renewal_overdue" },
      { status: "expiring", statusReason: "renewal_blocked" },
      { status: "invalid", statusReason: "self_signed" },
      { status: "unreachable", statusReason: "timeout" },
      { status: "revoked", statusReason: "revoked" },
      { status: "expired", statusReason: "expired" },
    ].map(problemRank);
    expect(ranked).toEqual([6, 5, 4, 5, 4, 4, 3, 2, 1, 0]);
  });

  test("a renewal overdue or requested under the days policy ranks with the renewals, whatever the days left say", () => {
    expect(problemRank({ status: "valid", statusReason: null, renewal: { state: "overdue" } })).toBe(4);
    expect(problemRank({ status: "expiring", statusReason: "expiring_soon", renewal: { state: "requested" } })).toBe(4);
    expect(problemRank({ status: "expiring", statusReason: "expiring_soon", renewal: { state: "not_due" } })).toBe(5);
    expect(problemRank({ status: "valid", statusReason: null, renewal: { state: "not_due" } })).toBe(6);
    // A worse status keeps its place.
    expect(problemRank({ status: "invalid", statusReason: "self_signed", renewal: { state: "overdue" } })).toBe(3);
  });
});
