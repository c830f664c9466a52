/**
 * The note `check` writes on stderr under a certificate it judged: what to do about it. For the
 * renewal reasons (overdue, requested, blocked by CAA: CONTRACT §18, §19, §22) it is the sentence the
 * settings area opens the certificate's page with (§23), after the target; an untrusted chain names
 * CERTKEEPER_EXTRA_CA_FILE; a valid certificate that still needs someone (a renewal overdue under the
 * days policy, CAA, DANE, a weak key) gets its page's sentence too. Called with views directly: no
 * server, no DNS.
 */
import { describe, expect, test } from "bun:test";
import { explainProblem } from "../adapters/cli/check_targets.ts";
import { explainCertificate, type ExplainedCertificate } from "../core/certificates/mod.ts";

const view = (fields: Partial<ExplainedCertificate>): ExplainedCertificate => ({
  domain: "shop.example",
  port: 443,
  status: "expiring",
  statusReason: null,
  daysUntilExpiry: 9,
  expiresAt: "2027-01-30T00:00:00.000Z",
  issuer: "Let's Encrypt R11",
  renewal: { deadline: "2027-01-20T00:00:00.000Z", state: "overdue", window: null, explanationUrl: null },
  ...fields,
});

describe("check's note", () => {
  test("renewal_blocked: says the CAA records forbid the issuer, as the certificate's page does", () => {
    const blocked = view({ statusReason: "renewal_blocked" });
    const note = explainProblem(blocked, { extraCaFile: undefined });
    expect(note).toBe(`shop.example:443: ${explainCertificate(blocked)}`);
    expect(note).toContain("CAA");
    expect(note).toContain("Let's Encrypt R11");
  });

  test("renewal_overdue and renewal_requested: the certificate page's sentence too", () => {
    const overdue = view({ statusReason: "renewal_overdue" });
    expect(explainProblem(overdue, { extraCaFile: undefined })).toBe(`shop.example:443: ${explainCertificate(overdue)}`);
    const requested = view({
      statusReason: "renewal_requested",
      renewal: { deadline: "2027-01-10T00:00:00.000Z", state: "requested", window: { start: "2027-01-05T00:00:00.000Z", end: "2027-01-10T00:00:00.000Z" }, explanationUrl: "https://ca.example/incident" },
    });
    const note = explainProblem(requested, { extraCaFile: undefined });
    expect(note).toBe(`shop.example:443: ${explainCertificate(requested)}`);
    expect(note).toContain("https://ca.example/incident");
  });

  test("an untrusted chain names CERTKEEPER_EXTRA_CA_FILE and its value; a valid certificate with nothing to do gets no note", () => {
    const note = explainProblem(view({ status: "invalid", statusReason: "untrusted_issuer" }), { extraCaFile: "/etc/ca.pem" });
    expect(note).toContain('(CERTKEEPER_EXTRA_CA_FILE is "/etc/ca.pem")');
    const healthy = view({ status: "valid", statusReason: null, daysUntilExpiry: 60, renewal: { deadline: "2027-03-01T00:00:00.000Z", state: "not_due", window: null, explanationUrl: null } });
    expect(explainCertificate(healthy)).toEndWith("nothing to do.");
    expect(explainProblem(healthy, { extraCaFile: undefined })).toBeNull();
  });

  test("valid under the days policy with its renewal overdue: the page's sentence, though no reason is set", () => {
    const overdue = view({ status: "valid", statusReason: null, daysUntilExpiry: 40 });
    const note = explainProblem(overdue, { extraCaFile: undefined });
    expect(note).toBe(`shop.example:443: ${explainCertificate(overdue)}`);
    expect(note).toContain("Should have been renewed by");
  });

  test("valid, but what DNS says refuses it or its key is weak: noted as on its page", () => {
    const notDue = { deadline: "2027-03-01T00:00:00.000Z", state: "not_due", window: null, explanationUrl: null };
    for (const [warning, words] of [["caa_forbids_issuer", "CAA records do not allow"], ["dane_mismatch", "TLSA"], ["weak_key", "key is weak"]] as const) {
      const warned = view({ status: "valid", statusReason: null, daysUntilExpiry: 60, renewal: notDue, warnings: [warning] } as Partial<ExplainedCertificate>);
      expect(explainProblem(warned, { extraCaFile: undefined })).toBe(`shop.example:443: ${explainCertificate(warned)}`);
      expect(explainProblem(warned, { extraCaFile: undefined })).toContain(words);
    }
  });
});
