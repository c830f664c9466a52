/**
 * A certificate's console page with Part III data present (renewal, ARI, deployment, DNS findings and
 * the Part III event kinds), read as an operator reads it and compared with GET /v1/certificates/{id}.
 * Data is seeded in the store as the other console tests do (console_verdict.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord, eventRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import type { CertificateRecord, EventRecord } from "../core/base/records.ts";

let h: Harness;
let owner: WebUser;
const now = Date.now();
const scope = () => ({ organizationId: h.org.id, mode: "live" as const });
const iso = (ms: number) => new Date(ms).toISOString();

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

async function insert(record: CertificateRecord, events: EventRecord[] = []): Promise<void> {
  expect(await h.store.certificates.insert(record, { limit: 1000, events })).toBe("created");
}

async function pageOf(id: string): Promise<string> {
  const page = await owner.browser.get(`/certificates/${id}?mode=live`);
  expect(page.status).toBe(200);
  return page.text;
}

/** The text of an element's HTML, tags dropped and the five escapes undone. */
function textOf(fragment: string): string {
  return fragment
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ")
    .trim();
}

/** The rows of the table with this id, each as its cells' text. */
function rowsOf(html: string, tableId: string): string[][] {
  const table = new RegExp(`<table[^>]*id="${tableId}"[^>]*>([\\s\\S]*?)</table>`).exec(html)?.[1] ?? "";
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? "";
  return [...body.matchAll(/<tr[^>]*>([\s\S]*?)<\/tr>/g)].map((row) => [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => textOf(cell[1]!)));
}

describe("DANE on the certificate's page", () => {
  // CONTRACT §22: "each endpoint gains `dane: { status: "match" | "mismatch" | "none", validated }`".
  // CONTRACT §17: the dashboard "shows a certificate's page (every field, its endpoints and chain, …)";
  // docs/settings.md: the page shows "its endpoints (one per address …) … and every field
  // `GET /v1/certificates/{id}` gives, folded away". docs/console.md: a DANE mismatch is among what the
  // page must make someone act on. The page's endpoint table says which address fails DANE, and whether
  // its TLSA answer was DNSSEC-validated.
  test("each address's DANE status, as the API gives it, is on the page", async () => {
    const record = certificateRecord(scope(), {
      domain: "mx.dane-page.example", name: "Mail relay", port: 25, protocol: "smtp",
      lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY,
    });
    record.endpoints = [
      { address: "192.0.2.10", fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null, dane: { status: "mismatch", validated: true } },
      { address: "192.0.2.11", fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null, dane: { status: "match", validated: true } },
    ];
    await insert(record);
    const api = expectData(await h.request("GET", `/v1/certificates/${record.id}`), 200) as any;
    expect(api.endpoints.map((e: any) => [e.address, e.dane?.status])).toEqual([["192.0.2.10", "mismatch"], ["192.0.2.11", "match"]]);
    expect(api.warnings).toContain("dane_mismatch");

    const html = await pageOf(record.id);
    const rows = rowsOf(html, "endpoints");
    expect(rows.map((cells) => cells[0])).toEqual(["192.0.2.10", "192.0.2.11"]);
    // The operator must be able to tell which address fails DANE: its row says "mismatch", the other's does not.
    expect(rows[0]!.join(" ")).toMatch(/mismatch/i);
    expect(rows[1]!.join(" ")).not.toMatch(/mismatch/i);
    expect(rows[1]!.join(" ")).toMatch(/\bmatch/i);
  });
});

describe("Part III events on the certificate's page", () => {
  // docs/console.md: the page shows things "in words and human times … Below: … the recent events with
  // how their deliveries went"; docs/settings.md: "its recent events". CONTRACT Part III intro: each new
  // event kind "is accepted wherever its kind is". For the Part I kinds the Details cell carries what the
  // event is about (a threshold, an error, the previous serial); for the four Part III kinds it says
  // which addresses lag, which deadline passed, which window the CA asked for, or that CAA blocks the
  // renewal.
  let html: string;
  let rows: string[][];
  const deadline = now - 2 * DAY;
  const windowEnd = now + 1 * DAY;

  beforeAll(async () => {
    const record = certificateRecord(scope(), {
      domain: "events.part3-page.example", name: "Events", alertPolicy: "renewal",
      lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 70 * DAY, notAfter: now + 20 * DAY,
    });
    const ev = (type: EventRecord["type"], at: number, data: Record<string, unknown>) =>
      eventRecord(scope(), { type, certificateId: record.id, createdAt: at, data: { certificate: { id: record.id, domain: record.domain }, ...data } });
    const events = [
      ev("certificate.renewal_overdue", now - 40_000, { deadline: iso(deadline), source: "lifetime", window: null, daysUntilExpiry: 20 }),
      ev("certificate.renewal_requested", now - 30_000, { window: { start: iso(now - 3 * DAY), end: iso(windowEnd) }, explanationUrl: "https://ca.example/incident" }),
      ev("certificate.not_deployed", now - 20_000, {
        deployment: { issuedAt: iso(now - 2 * DAY), fingerprintSha256: null, notAfter: iso(now + 88 * DAY), issuer: "Let's Encrypt", seenAt: iso(now - 2 * DAY), servedBy: 1, endpoints: 2 },
        lagging: ["198.51.100.77"],
      }),
      ev("certificate.renewal_blocked", now - 10_000, { caa: { issuerDomain: "letsencrypt.org" } }),
    ];
    await insert(record, events);
    html = await pageOf(record.id);
    rows = rowsOf(html, "events");
  });

  const rowOf = (type: string) => rows.find((cells) => cells[1] === type);

  test("certificate.not_deployed names the addresses still serving the older certificate", () => {
    // CONTRACT §20: `certificate.not_deployed` (`data: { deployment, lagging: [addresses] }`).
    const row = rowOf("certificate.not_deployed");
    expect(row).toBeDefined();
    expect(row!.join(" ")).toContain("198.51.100.77");
  });

  test("certificate.renewal_overdue says which deadline passed", () => {
    // CONTRACT §18: one `certificate.renewal_overdue` (`data: { deadline, source, window, daysUntilExpiry }`).
    const row = rowOf("certificate.renewal_overdue");
    expect(row).toBeDefined();
    expect(row![2]).not.toBe("");
    expect(row![2]).toContain(iso(deadline).slice(0, 10));
  });

  test("certificate.renewal_requested says by when the CA asks for the replacement", () => {
    // CONTRACT §19: one `certificate.renewal_requested` per serial and window end (`data: { window, explanationUrl }`).
    const row = rowOf("certificate.renewal_requested");
    expect(row).toBeDefined();
    expect(row![2]).toContain(iso(windowEnd).slice(0, 10));
  });

  test("every Part III event row has a sentence in its Details cell", () => {
    for (const type of ["certificate.renewal_overdue", "certificate.renewal_requested", "certificate.not_deployed", "certificate.renewal_blocked"]) {
      const row = rowOf(type);
      expect(row, type).toBeDefined();
      expect(row![2]!.length, `${type}'s details`).toBeGreaterThan(0);
    }
  });
});

describe("hostile issuer strings on the certificate's page", () => {
  // The issuer comes from whatever the monitored server (or a CT log entry) presents. The product writes
  // bidi controls out wherever they would reorder its own words (core/notify/_describe.ts: "control and
  // reordering characters written out (a line break or U+202E in an issuer's …"; docs/alerting.md:
  // "a right-to-left override could forge a fact or reverse text"; docs/cli.md: written out as `\u202e`).
  // The console's own sentences (the verdict, the "Not deployed yet" line) carry no raw U+202E, so the
  // rest of the sentence, the instruction to the operator, is never shown reversed.
  const RLO = "\u202E";
  test("the verdict sentence does not carry a raw right-to-left override from the issuer", async () => {
    const record = certificateRecord(scope(), {
      domain: "caa.bidi-page.example", name: "CAA bidi",
      lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY,
      dns: { caa: { status: "forbidden", issuerDomain: "letsencrypt.org", blocking: null as any } } as any,
    });
    record.details.issuer = `Example CA${RLO}llun`;
    await insert(record);
    const html = await pageOf(record.id);
    const verdict = /<p class="verdict"[^>]*>([\s\S]*?)<\/p>/.exec(html)![1]!;
    expect(verdict).toContain("CAA");
    // Either written out (as the notifications and the CLI do) or isolated so it cannot reach the words after it.
    const isolated = /<bdi>|dir="auto"|\u2068|\u2066|\u2067/.test(verdict);
    expect(verdict.includes(RLO) && !isolated).toBe(false);
  });

  test("the 'Not deployed yet' line does not carry a raw right-to-left override from the new issuance's issuer", async () => {
    const record = certificateRecord(scope(), {
      domain: "deploy.bidi-page.example", name: "Deploy bidi",
      lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 30 * DAY, notAfter: now + 60 * DAY,
    });
    record.endpoints = ["192.0.2.21", "192.0.2.22"].map((address) => ({ address, fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null }));
    record.deployment = { issuedAt: now - 2 * DAY, notAfter: now + 88 * DAY, fingerprintSha256: null, issuer: `Evil CA${RLO}`, seenAt: now - 2 * DAY, announced: false };
    await insert(record);
    const html = await pageOf(record.id);
    const line = /<dt>Not deployed yet<\/dt><dd>([\s\S]*?)<\/dd>/.exec(html)?.[1];
    expect(line).toBeDefined();
    expect(textOf(line!)).toContain("addresses");
    const isolated = /<bdi>|dir="auto"|\u2068|\u2066|\u2067/.test(line!);
    expect(line!.includes(RLO) && !isolated).toBe(false);
  });
});
