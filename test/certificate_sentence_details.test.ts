/**
 * The one plain sentence (CONTRACT §23), details the suite left open: each test fails on a one-line
 * change of core/certificates/explain.ts no other test caught. Which addresses it names (none when
 * all have the reason; two by address; more counted), how it lists three names, the port shown for
 * another protocol on 443, the revocation reason, and a renewal that is overdue and that CAA blocks;
 * also the port shown off 443, the subject named when the certificate has no alternative names, a CAA
 * record that forbids the issuer before the renewal is due, a renewal the CA requested under the days
 * policy, and how many addresses serve a newer certificate (CONTRACT §20).
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

describe("the sentence of a certificate's page", () => {
  test("a TLS port other than 443 is part of what it names", () => {
    expect(explain({ port: 8443, status: "unreachable", statusReason: "timeout" })).toStartWith("mail.internal:8443 did not answer in time");
    expect(explain({ port: 8443, status: "unreachable", statusReason: "connection_refused" })).toStartWith("Nothing accepted a connection to mail.internal:8443");
  });

  test("a certificate without alternative names is named by its subject", () => {
    expect(explain({ status: "invalid", statusReason: "hostname_mismatch", subjectAlternativeNames: [], subject: "legacy.internal" })).toBe(
      "Serves a certificate for legacy.internal, not mail.internal: install a certificate that names mail.internal.",
    );
  });

  test("CAA forbidding the issuer before the renewal is due: still valid, with what to change before it is", () => {
    const sentence = explain({ warnings: ["caa_forbids_issuer"], renewal: { deadline: "2027-02-01T10:00:00.000Z", state: "not_due" } });
    expect(sentence).toStartWith("Valid, expires ");
    expect(sentence).toContain("but the domain's CAA records do not allow its issuer (Internal CA) to issue the next one");
    expect(sentence).not.toContain("Should have been renewed");
  });

  test("a renewal the CA requested, under the days policy (no reason, still valid): the request is the news", () => {
    const sentence = explain({ renewal: { deadline: null, state: "requested", window: { start: "2027-01-01T00:00:00.000Z", end: "2027-01-05T00:00:00.000Z" } } });
    expect(sentence).toStartWith("Its certificate authority asks for this certificate to be replaced early, by 2027-01-05 00:00 UTC");
    expect(sentence).not.toContain("nothing to do");
  });

  test("a newer certificate not yet served everywhere says how many addresses serve it, of how many", () => {
    const sentence = explain({ deployment: { issuedAt: "2027-01-10T08:00:00.000Z", servedBy: 1, endpoints: 3 } });
    expect(sentence).toBe(
      "A newer certificate, issued 2027-01-10 08:00 UTC, is served by 1 of its 3 addresses: install it on the others (the addresses below that still serve the older one).",
    );
  });
});
