/**
 * The one plain sentence a certificate's page opens with (CONTRACT §23), cases no other test held:
 * the port shown off 443, the subject named when the certificate has no alternative names, a CAA
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
