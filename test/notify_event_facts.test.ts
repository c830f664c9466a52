/**
 * The facts each kind of event carries to the person reading it (revocation details, chain serials,
 * renewal windows, the new certificate's issuer, the old one's expiry), as a channel shows them: a
 * Telegram message, plain "Name: value" lines.
 */
import { describe, expect, test } from "bun:test";
import type { EventRecord } from "../core/base/records.ts";
import { renderNotification } from "../core/notify/payloads.ts";
import { CREATED, certificateView, channelOf, eventOf } from "./support/notify_events.ts";

const OPTIONS = { now: CREATED, mailFrom: "certkeeper@alerts.example" };

function text(event: EventRecord): string {
  const n = renderNotification(event, channelOf("telegram", { botToken: "123456:ABC-DEF", chatId: 42 }), OPTIONS);
  if (n.kind !== "http") throw new Error("expected an HTTP request");
  return (JSON.parse(n.request.body) as { text: string }).text;
}

const lines = (event: EventRecord) => text(event).split("\n");

describe("certificate.revoked", () => {
  const revoked = (source: "crl" | "ocsp") =>
    eventOf("certificate.revoked", {
      certificate: certificateView({
        status: "revoked",
        statusReason: "revoked",
        revocation: { status: "revoked", source, checkedAt: "2026-05-05T08:00:00.000Z", revokedAt: "2026-05-04T12:34:00.000Z", reason: "keyCompromise" },
      }),
    });

  test("names when it was revoked, why, and who said so (CRL or OCSP)", () => {
    expect(lines(revoked("crl"))).toEqual(expect.arrayContaining(["Revoked at: 2026-05-04 12:34 UTC", "Revocation reason: keyCompromise", "Reported by: CRL"]));
    expect(lines(revoked("ocsp"))).toContain("Reported by: OCSP");
  });
});

describe("certificate.chain_expiring", () => {
  test("names the chain certificate, its serial number and its expiry", () => {
    const event = eventOf("certificate.chain_expiring", {
      certificate: certificateView({ status: "valid", statusReason: null }),
      threshold: 14,
      chainCertificate: { subject: "R3", serialNumber: "0A:0B:0C", expiresAt: "2026-05-15T00:00:00.000Z" },
    });
    expect(lines(event)).toEqual(
      expect.arrayContaining(["Chain certificate: R3", "Chain certificate serial: 0A:0B:0C", "Chain certificate expires: 2026-05-15 00:00 UTC"]),
    );
  });
});

describe("renewal windows", () => {
  const window = { start: "2026-05-01T00:00:00.000Z", end: "2026-05-08T00:00:00.000Z" };

  test("an overdue renewal gives the CA's suggested window", () => {
    const event = eventOf("certificate.renewal_overdue", {
      certificate: certificateView({ status: "expiring", statusReason: null }),
      deadline: "2026-05-03T00:00:00.000Z",
      source: "ari",
      window,
    });
    expect(lines(event)).toContain("Renewal window: 2026-05-01 00:00 UTC to 2026-05-08 00:00 UTC");
  });

  test("an early-renewal request gives the window it asks for", () => {
    const event = eventOf("certificate.renewal_requested", { certificate: certificateView({ status: "expiring", statusReason: null }), window });
    expect(lines(event)).toContain("Renewal window: 2026-05-01 00:00 UTC to 2026-05-08 00:00 UTC");
  });
});

describe("certificate.not_deployed", () => {
  const endpoint = (address: string, expiresAt: string) => ({
    address, status: "valid", statusReason: null, serialNumber: "01", fingerprintSha256: "AA", expiresAt, lastCheckedAt: null, dane: null,
  });
  const notDeployed = (endpoints: unknown[], lagging: string[]) =>
    eventOf("certificate.not_deployed", {
      certificate: certificateView({ status: "valid", statusReason: null, expiresAt: "2026-07-01T00:00:00.000Z", endpoints }),
      deployment: { issuedAt: "2026-05-04T00:00:00.000Z", notAfter: "2026-08-01T00:00:00.000Z", issuer: "Example Issuing CA", servedBy: 1, endpoints: 3 },
      lagging,
    });

  test("names who issued the new certificate", () => {
    expect(lines(notDeployed([], ["192.0.2.2"]))).toContain("New certificate issued by: Example Issuing CA");
  });

  test("of several lagging addresses, the old certificate that expires first is the one named", () => {
    const event = notDeployed(
      [endpoint("192.0.2.1", "2026-09-01T00:00:00.000Z"), endpoint("192.0.2.2", "2026-06-20T00:00:00.000Z"), endpoint("192.0.2.3", "2026-06-10T00:00:00.000Z")],
      ["192.0.2.2", "192.0.2.3"],
    );
    expect(text(event)).toContain("192.0.2.2, 192.0.2.3 still serve the old one, which expires on 2026-06-10 00:00 UTC.");
  });

  test("an old certificate that expires at the very moment of the event has expired", () => {
    const at = new Date(CREATED).toISOString();
    const event = notDeployed([endpoint("192.0.2.2", at)], ["192.0.2.2"]);
    expect(text(event)).toContain("192.0.2.2 still serves the old one, which expired on 2026-05-05 09:00 UTC.");
  });
});

describe("certificate.renewal_blocked", () => {
  test("says which CA (and its CAA domain) the records at which name forbid, for the name it would issue for", () => {
    const event = eventOf("certificate.renewal_blocked", {
      certificate: certificateView({ domain: "www.example.com", name: "www.example.com", status: "valid", statusReason: null, issuer: "Let's Encrypt" }),
      caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "pki.goog"'], issuerDomain: "letsencrypt.org" },
    });
    expect(text(event)).toContain("The CAA records at example.com do not allow Let's Encrypt (letsencrypt.org) to issue for shop.example.com,");
  });
});

describe("certificate.issued", () => {
  test("names every DNS name, the validity start and the SHA-256 fingerprint", () => {
    const event: EventRecord = {
      ...eventOf("certificate.issued", {
        domain: "example.com",
        dnsNames: ["example.com", "www.example.com"],
        issuer: "Example CA",
        notBefore: "2026-05-04T00:00:00.000Z",
        notAfter: "2026-08-02T00:00:00.000Z",
        fingerprintSha256: "AB:CD:EF",
        authorizedIssuer: true,
      }),
      certificateId: null,
    };
    expect(lines(event)).toEqual(
      expect.arrayContaining([
        "Names: example.com, www.example.com",
        "Valid from: 2026-05-04 00:00 UTC",
        "Valid until: 2026-08-02 00:00 UTC",
        "SHA-256 fingerprint: AB:CD:EF",
      ]),
    );
  });
});

describe("bounds and what cannot be read", () => {
  test("a CT certificate's list of names is shown up to 100 of them", () => {
    const names = Array.from({ length: 150 }, (_, i) => `n${i}.example.com`);
    const event: EventRecord = { ...eventOf("certificate.issued", { domain: "example.com", dnsNames: names, issuer: "Example CA" }), certificateId: null };
    const line = lines(event).find((l) => l.startsWith("Names: "))!;
    expect(line.slice("Names: ".length).split(", ")).toEqual(names.slice(0, 100));
  });

  test("a date that cannot be read is shown as given, not dropped", () => {
    const event = eventOf("certificate.renewal_overdue", {
      certificate: certificateView({ status: "expiring", statusReason: null }),
      deadline: "sometime soon",
      source: "lifetime",
    });
    expect(lines(event)).toContain("Renewal deadline: sometime soon");
  });
});
