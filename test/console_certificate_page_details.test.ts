/**
 * A certificate's page as an operator reads it (CONTRACT §17, §23): where it connects (protocol,
 * connect-to), what it covers, its alerts and alert policy in words, revocation with its source, its
 * key, a renewal overdue, its addresses (each one's reason and DANE verdict), the chain's own days, and
 * its recent events (muted ones, failed deliveries with why). In-process, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateDetails, certificateRecord, channelRecord, deliveryRecord, eventRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

const HOUR = 3_600_000;
let h: Harness;
let owner: WebUser;
const live = () => ({ organizationId: h.org.id, mode: "live" as const });

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000, certificates: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

async function seed(overrides: Parameters<typeof certificateRecord>[1]) {
  const record = certificateRecord(live(), { lastCheckedAt: Date.now() - HOUR, notBefore: Date.now() - 30 * DAY, notAfter: Date.now() + 60 * DAY, ...overrides });
  expect(await h.store.certificates.insert(record, { limit: 100_000, events: [] })).toBe("created");
  return record;
}

/** The page's text without tags, spaces collapsed. */
const words = (page: string) => page.replace(/<[^>]+>/g, " ").replace(/&amp;/g, "&").replace(/\s+/g, " ");

/** The "In short" list, as words. */
function summary(page: string): string {
  return words(/<dl class="fields" id="summary">([\s\S]*?)<\/dl>/.exec(page)?.[1] ?? "");
}

describe("a certificate's page", () => {
  test("names the protocol and the address it connects to under the heading", async () => {
    const record = await seed({ domain: "mail.example.com", port: 25, protocol: "smtp", connectTo: "10.0.0.5" });
    const page = (await owner.browser.get(`/certificates/${record.id}?mode=live`)).text;
    expect(page).toContain('<p class="mono">mail.example.com:25 · smtp · connects to 10.0.0.5</p>');
    const plain = await seed({ domain: "plain.example.com" });
    expect((await owner.browser.get(`/certificates/${plain.id}?mode=live`)).text).toContain('<p class="mono">plain.example.com:443</p>');
  });

  test("In short: the names covered, no alerts by days, the renewal policy, revocation by CRL, an EC key with its curve", async () => {
    const at = Date.now() - 3 * HOUR;
    const domain = "short.example.com";
    const record = await seed({
      domain,
      alertThresholds: [],
      alertPolicy: "renewal",
      details: certificateDetails(domain, {
        notBefore: Date.now() - 30 * DAY,
        notAfter: Date.now() + 60 * DAY,
        subjectAlternativeNames: [domain, "alt.example.com"],
        publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
        revocation: { status: "good", source: "crl", checkedAt: at, revokedAt: null, reason: null, validUntil: null },
      }),
    });
    const shown = summary((await owner.browser.get(`/certificates/${record.id}?mode=live`)).text);
    expect(shown).toContain(`Covers ${domain}, alt.example.com`);
    expect(shown).toContain("Alerts no alerts by days left");
    expect(shown).toContain("Alert policy when a renewal is overdue");
    expect(shown).toContain("Revocation good (CRL), asked 3 hours ago");
    expect(shown).toContain("Key EC P-256");
  });

  test("In short: fixed days, a revocation not checked, an RSA key's size", async () => {
    const record = await seed({ domain: "days.example.com", alertThresholds: [30, 7], alertPolicy: "days" });
    const shown = summary((await owner.browser.get(`/certificates/${record.id}?mode=live`)).text);
    expect(shown).toContain("Alerts 30, 7 days before expiry");
    expect(shown).toContain("Alert policy at fixed days before expiry");
    expect(shown).toContain("Revocation not checked");
    expect(shown).toContain("Key RSA 2048 bits");
  });

  test("a renewal past its deadline reads as overdue, with when it was due", async () => {
    // 100 days of lifetime, three quarters gone 15 days ago.
    const record = await seed({ domain: "late.example.com", notBefore: Date.now() - 90 * DAY, notAfter: Date.now() + 10 * DAY });
    const shown = summary((await owner.browser.get(`/certificates/${record.id}?mode=live`)).text);
    expect(shown).toMatch(/Renewal overdue: it was due 1[45] days ago/);
  });

  test("the edit form's hint says a mute has ended as not muted", async () => {
    const record = await seed({ domain: "unmuted.example.com", mutedUntil: Date.now() - HOUR });
    const page = (await owner.browser.get(`/certificates/${record.id}?mode=live`)).text;
    expect(page).toContain('<p id="edit-mute-hint" class="hint">Now sent.');
  });

  test("each address shows its own reason and DANE verdict, DNSSEC-validated or not", async () => {
    const domain = "nodes.example.com";
    const details = certificateDetails(domain, { notBefore: Date.now() - 30 * DAY, notAfter: Date.now() + 60 * DAY });
    const record = await seed({
      domain,
      port: 25,
      protocol: "smtp",
      details,
      endpoints: [
        { address: "192.0.2.1", fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null, dane: { status: "match", validated: false } },
        { address: "192.0.2.2", fingerprint: null, details: null, problem: null, failure: "connection_refused", tls: null, dane: null },
      ],
    });
    const page = (await owner.browser.get(`/certificates/${record.id}?mode=live`)).text;
    const table = words(/<table class="stack" aria-labelledby="endpoints-heading" id="endpoints">[\s\S]*?<\/table>/.exec(page)?.[0] ?? "");
    expect(table).toContain("matches a TLSA record (not DNSSEC-validated)");
    expect(table).toContain("connection refused");
  });

  test("the chain's rows show each certificate's own days left", async () => {
    const domain = "chain.example.com";
    const record = await seed({
      domain,
      details: certificateDetails(domain, {
        notBefore: Date.now() - 30 * DAY,
        notAfter: Date.now() + 60 * DAY + HOUR,
        chain: [
          { subject: domain, issuer: "Test Intermediate", validFrom: new Date(Date.now() - 30 * DAY).toISOString(), validTo: new Date(Date.now() + 60 * DAY + HOUR).toISOString(), serialNumber: "01", fingerprintSha256: "AA" },
          { subject: "Test Intermediate", issuer: "Test Root", validFrom: new Date(Date.now() - 300 * DAY).toISOString(), validTo: new Date(Date.now() + 400 * DAY + HOUR).toISOString(), serialNumber: "02", fingerprintSha256: "BB" },
        ],
      }),
    });
    const page = (await owner.browser.get(`/certificates/${record.id}?mode=live`)).text;
    const rows = [...(/<table class="stack" aria-labelledby="chain-heading" id="chain">[\s\S]*?<\/table>/.exec(page)?.[0] ?? "").matchAll(/<td data-label="Expires">([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(rows).toEqual(["in 60 days", "in 400 days"]);
    // The chain and the addresses have sections of their own, not rows of "Every field".
    const every = /<details class="more" id="all-fields">[\s\S]*?<\/details>/.exec(page)?.[0] ?? "";
    expect(every).not.toMatch(/<dt>Chain<\/dt>/);
    expect(every).not.toMatch(/<dt>Endpoints<\/dt>/);
  });

  test("recent events: a muted one says so; failed deliveries are counted with why", async () => {
    const record = await seed({ domain: "events.example.com" });
    const channel = channelRecord(live(), { name: "Ops hook" });
    expect(await h.store.channels.insert(channel, { limit: 100 })).toBe(true);
    const other = channelRecord(live(), { name: "Second hook" });
    expect(await h.store.channels.insert(other, { limit: 100 })).toBe(true);
    const certificate = { id: record.id, domain: record.domain, daysUntilExpiry: 29 };
    const muted = eventRecord(live(), { certificateId: record.id, createdAt: Date.now() - 2 * HOUR, data: { certificate, threshold: 30, muted: true } });
    await h.store.events.insert(muted, []);
    const failed = eventRecord(live(), { certificateId: record.id, createdAt: Date.now() - HOUR, data: { certificate, threshold: 14 } });
    await h.store.events.insert(failed, [
      deliveryRecord(failed.id, channel.id, { status: "failed", attempts: 5, lastError: "HTTP 500 from the receiver" }),
      deliveryRecord(failed.id, other.id, { status: "delivered", attempts: 1 }),
    ]);
    const page = (await owner.browser.get(`/certificates/${record.id}?mode=live`)).text;
    const table = /<table class="stack" aria-labelledby="events-heading" id="events">[\s\S]*?<\/table>/.exec(page)?.[0] ?? "";
    const rows = [...table.matchAll(/<tr><td data-label="When">[\s\S]*?<\/tr>/g)].map((m) => words(m[0]));
    const mutedRow = rows.find((r) => r.includes("threshold 30 days"));
    const failedRow = rows.find((r) => r.includes("threshold 14 days"));
    expect(mutedRow).toContain("muted: delivered nowhere");
    expect(failedRow).toContain("1 delivered, 1 failed");
    expect(failedRow).toContain("HTTP 500 from the receiver");
  });
});
