/**
 * The one plain sentence (CONTRACT §23), details the suite left open: each test fails on a one-line
 * change of core/certificates/explain.ts no other test caught. Which addresses it names (none when
 * all have the reason; two by address; more counted), how it lists three names, the port shown for
 * another protocol on 443, the revocation reason, and a renewal that is overdue and that CAA blocks.
 */
import { describe, expect, test } from "bun:test";
import { explainCertificate, type ExplainedCertificate } from "../core/certificates/explain.ts";

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
  chainExpiresAt: null,
  protocol: "tls",
  connectTo: null,
  endpoints: [],
};

const explain = (fields: Partial<ExplainedCertificate>) => explainCertificate({ ...base, ...fields });
const at = (address: string, statusReason: string | null) => ({ address, status: statusReason ? "unreachable" : "valid", statusReason });

describe("which addresses the sentence names", () => {
  test("every address with the reason: none named", () => {
    const sentence = explain({ status: "unreachable", statusReason: "timeout", endpoints: [at("10.0.0.1", "timeout"), at("10.0.0.2", "timeout")] });
    expect(sentence).toBe("mail.internal did not answer in time: check that the server is up and that no firewall drops the connection, then check again.");
  });

  test("two of several: both named; three of four: counted", () => {
    const two = explain({ status: "unreachable", statusReason: "timeout", endpoints: [at("10.0.0.1", "timeout"), at("10.0.0.2", "timeout"), at("10.0.0.3", null)] });
    expect(two).toContain("did not answer in time (at 10.0.0.1 and 10.0.0.2):");
    const three = explain({
      status: "unreachable",
      statusReason: "timeout",
      endpoints: [at("10.0.0.1", "timeout"), at("10.0.0.2", "timeout"), at("10.0.0.3", "timeout"), at("10.0.0.4", null)],
    });
    expect(three).toContain("did not answer in time (at 3 of its 4 addresses):");
  });
});

describe("what the sentence says", () => {
  test("three names are listed in full; four are cut to two and a count", () => {
    expect(explain({ status: "invalid", statusReason: "hostname_mismatch", subjectAlternativeNames: ["a.internal", "b.internal", "c.internal"] })).toBe(
      "Serves a certificate for a.internal, b.internal and c.internal, not mail.internal: install a certificate that names mail.internal.",
    );
  });

  test("a protocol other than tls on port 443 shows the port", () => {
    expect(explain({ status: "unreachable", statusReason: "timeout", protocol: "smtp" })).toStartWith("mail.internal:443 did not answer in time");
  });

  test("a revocation names when and why", () => {
    expect(explain({ status: "revoked", statusReason: "revoked", revocation: { revokedAt: "2027-01-02T03:04:00.000Z", reason: "keyCompromise" } })).toBe(
      "Revoked by its certificate authority on 2027-01-02 03:04 UTC (keyCompromise): clients that check revocation refuse it; install a new certificate now.",
    );
  });

  test("a valid certificate whose renewal is overdue and whose issuer CAA forbids: the renewal is blocked", () => {
    const sentence = explain({ renewal: { deadline: "2027-02-01T10:00:00.000Z", state: "overdue" }, warnings: ["caa_forbids_issuer"] });
    expect(sentence).toStartWith("Should have been renewed by 2027-02-01 10:00 UTC, and the domain's CAA records do not allow its issuer (Internal CA) to issue the next one");
  });
});
