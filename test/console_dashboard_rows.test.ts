/**
 * What an operator reads on the dashboard every day (CONTRACT §17, §23): the pager keeps every filter,
 * the filter form keeps the tag and offers Clear, each row's Expires date, Last check in words, the
 * revocation note (revoked only, with its source), an expired mute not shown, a status reason not
 * repeated; the banners (failing channels counted, oldest first, disabled ones left out; what a member
 * is told), and the organization named in the header. In-process, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord, channelRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import { html } from "../adapters/web/html.ts";

const HOUR = 3_600_000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000, certificates: 100_000 } });
});
afterAll(async () => {
  await h?.close();
});

/** An organization of its own (counts and banners are per organization) and its signed-in user. */
async function newOrganization(role: "owner" | "member" = "owner", name = `Org ${crypto.randomUUID().slice(0, 6)}`) {
  const org = await h.core.services.admin.createOrganization({ name, plan: "enterprise", limits: { certificates: 100_000, requestsPerMinute: 100_000 } });
  const user: WebUser = await signedInUser(h, role, org.id);
  return { org, user, scope: { organizationId: org.id, mode: "live" as const } };
}

async function seed(scope: { organizationId: string; mode: "live" | "test" }, overrides: Parameters<typeof certificateRecord>[1]) {
  const record = certificateRecord(scope, { lastCheckedAt: Date.now() - HOUR, notBefore: Date.now() - 30 * DAY, notAfter: Date.now() + 60 * DAY, ...overrides });
  expect(await h.store.certificates.insert(record, { limit: 100_000, events: [] })).toBe("created");
  return record;
}

/** The `<tr>` of one certificate on a dashboard page. */
function row(page: string, id: string): string {
  const match = new RegExp(`<tr data-certificate-id="${id}"[\\s\\S]*?</tr>`).exec(page);
  if (!match) throw new Error(`no row for ${id}`);
  return match[0];
}

/** The text of a row's cell (tags stripped). */
function cell(rowHtml: string, label: string): string {
  const match = new RegExp(`<td data-label="${label}"[^>]*>([\\s\\S]*?)</td>`).exec(rowHtml);
  if (!match) throw new Error(`no ${label} cell`);
  return match[1]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
}

const shown = (ms: number) => {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
};

describe("the dashboard's pages and filters", () => {
  test("Next page keeps the tag and status filters of the page it is on", async () => {
    const { user, scope } = await newOrganization();
    for (let i = 0; i < 55; i++) await seed(scope, { domain: `web-${String(i).padStart(2, "0")}.example.com`, tags: ["team:web"] });
    for (let i = 0; i < 5; i++) await seed(scope, { domain: `other-${i}.example.com`, tags: [] });
    const first = await user.browser.get("/?mode=live&tag=team:web&status=valid");
    expect(first.status).toBe(200);
    const next = /<a rel="next" href="([^"]+)"/.exec(first.text)?.[1]?.replace(/&amp;/g, "&");
    expect(next).toBeDefined();
    const params = new URL(next!, "http://localhost").searchParams;
    expect({ tag: params.get("tag"), status: params.get("status"), mode: params.get("mode") }).toEqual({ tag: "team:web", status: "valid", mode: "live" });
    // The second page holds the rest of the tagged certificates only.
    const second = await user.browser.get(next!);
    const domains = [...second.text.matchAll(/<div class="mono small">([a-z0-9.-]+):443<\/div>/g)].map((m) => m[1]);
    expect(domains.length).toBe(5);
    expect(domains.every((d) => d!.startsWith("web-"))).toBe(true);
  });

  test("the tag typed stays in the filter form, and a Clear link appears only while filtering", async () => {
    const { user, scope } = await newOrganization();
    await seed(scope, { domain: "tagged.example.com", tags: ["env:prod"] });
    const filtered = await user.browser.get("/?mode=live&tag=env:prod");
    expect(filtered.text).toMatch(/<input id="filter-tag" name="tag" type="text" value="env:prod"/);
    expect(filtered.text).toContain('<a class="button secondary" href="/?mode=live">Clear</a>');
    const plain = await user.browser.get("/?mode=live");
    expect(plain.text).not.toContain(">Clear</a>");
  });
});

describe("a certificate's row", () => {
  test("Expires shows the days left and the expiry date in UTC", async () => {
    const { user, scope } = await newOrganization();
    const notAfter = Date.UTC(2099, 0, 2, 3, 4, 5);
    const record = await seed(scope, { domain: "far.example.com", notAfter, lastCheckedAt: Date.now() - HOUR });
    const page = await user.browser.get("/?mode=live");
    expect(cell(row(page.text, record.id), "Expires")).toContain("2099-01-02 03:04 UTC");
  });

  test("Last check in words: whole minutes, hours and days, counted down, one in the singular", async () => {
    const { user, scope } = await newOrganization();
    const now = Date.now();
    const cases: Array<[number, string]> = [
      [90_000, "1 minute ago"],
      [170_000, "2 minutes ago"],
      [2 * HOUR + 50 * 60_000, "2 hours ago"],
      [30 * HOUR, "1 day ago"],
    ];
    const ids: string[] = [];
    for (const [ago] of cases) ids.push((await seed(scope, { lastCheckedAt: now - ago })).id);
    const page = await user.browser.get("/?mode=live");
    expect(ids.map((id) => cell(row(page.text, id), "Last check"))).toEqual(cases.map(([, words]) => words));
  });

  test("a revoked certificate's note names its source (CRL or OCSP); a revocation status other than revoked adds no note", async () => {
    const { user, scope } = await newOrganization();
    const at = Date.now() - 2 * DAY;
    const crl = await seed(scope, { domain: "crl.example.com", revocation: { status: "revoked", source: "crl", checkedAt: at, revokedAt: at, reason: "keyCompromise", validUntil: null } });
    const ocsp = await seed(scope, { domain: "ocsp.example.com", revocation: { status: "revoked", source: "ocsp", checkedAt: at, revokedAt: at, reason: null, validUntil: null } });
    const unknown = await seed(scope, { domain: "unknown.example.com", revocation: { status: "unknown", source: "ocsp", checkedAt: at, revokedAt: null, reason: null, validUntil: null } });
    const page = await user.browser.get("/?mode=live");
    expect(cell(row(page.text, crl.id), "Status")).toContain(`keyCompromise, since ${shown(at)} (CRL)`);
    expect(cell(row(page.text, ocsp.id), "Status")).toContain(`since ${shown(at)} (OCSP)`);
    const unknownStatus = cell(row(page.text, unknown.id), "Status");
    expect(unknownStatus).not.toContain("OCSP");
    expect(unknownStatus).not.toContain("by its CA");
  });

  test("a mute that has ended is not shown; one still running is, with until when", async () => {
    const { user, scope } = await newOrganization();
    const ended = await seed(scope, { domain: "ended.example.com", mutedUntil: Date.now() - HOUR });
    const until = Date.now() + 3 * DAY;
    const running = await seed(scope, { domain: "running.example.com", mutedUntil: until });
    const page = await user.browser.get("/?mode=live");
    expect(cell(row(page.text, ended.id), "Certificate")).not.toContain("muted");
    expect(cell(row(page.text, running.id), "Certificate")).toContain(`muted until ${shown(until)}`);
  });

  test("an expired certificate says expired once, not again as its reason", async () => {
    const { user, scope } = await newOrganization();
    const record = await seed(scope, { domain: "gone.example.com", notBefore: Date.now() - 90 * DAY, notAfter: Date.now() - 2 * DAY });
    const page = await user.browser.get("/?mode=live");
    expect(cell(row(page.text, record.id), "Status").match(/expired/g)?.length).toBe(1);
  });
});

describe("the dashboard's banners and header", () => {
  test("failing channels: counted, oldest failure first, a disabled one left out", async () => {
    const { user, scope } = await newOrganization();
    const now = Date.now();
    const make = async (name: string, enabled: boolean, failedAt: number) => {
      const channel = channelRecord(scope, { name, enabled });
      expect(await h.store.channels.insert(channel, { limit: 100 })).toBe(true);
      await h.store.channels.recordAttempt(channel.id, { at: failedAt, status: "pending", error: `${name} answered 500` });
    };
    await make("Newer hook", true, now - HOUR);
    await make("Older hook", true, now - 5 * HOUR);
    await make("Switched off", false, now - 10 * HOUR);
    const page = (await user.browser.get("/?mode=live")).text;
    const banner = /<div class="banner error"[\s\S]*?<\/div>/.exec(page)?.[0] ?? "";
    expect(banner).toContain("2 channels are failing");
    expect(banner).toContain("alerts sent to them do not arrive");
    expect(banner).not.toContain("Switched off");
    expect(banner.indexOf("Older hook")).toBeGreaterThan(-1);
    expect(banner.indexOf("Older hook")).toBeLessThan(banner.indexOf("Newer hook"));
  });

  test("one failing channel is spoken of in the singular", async () => {
    const { user, scope } = await newOrganization();
    const channel = channelRecord(scope, { name: "Only hook" });
    expect(await h.store.channels.insert(channel, { limit: 100 })).toBe(true);
    await h.store.channels.recordAttempt(channel.id, { at: Date.now() - HOUR, status: "pending", error: "refused" });
    const page = (await user.browser.get("/?mode=live")).text;
    expect(page).toContain("A channel is failing");
    expect(page).toContain("alerts sent to it do not arrive");
  });

  test("with no channel, a member is told to ask an owner or admin, and given no Add link", async () => {
    const { user } = await newOrganization("member");
    const page = (await user.browser.get("/?mode=live")).text;
    const banner = /<div class="banner warning"[\s\S]*?<\/div>/.exec(page)?.[0] ?? "";
    expect(banner).toContain("Ask an owner or admin to add a channel.");
    expect(banner).not.toContain("#add-channel");
  });

  test("the header names the signed-in user's organization, escaped", async () => {
    const { user } = await newOrganization("owner", "Acme <b>& Sons</b>");
    const page = (await user.browser.get("/?mode=live")).text;
    expect(page).toContain('<span class="org">Acme &lt;b&gt;&amp; Sons&lt;/b&gt;</span>');
  });
});

describe("the html template", () => {
  test("a list of plain strings is escaped item by item, as a single string is", () => {
    expect(html`<p>${["<b>", "a&b", '"q"']}</p>`.value).toBe("<p>&lt;b&gt;a&amp;b&quot;q&quot;</p>");
  });
});

describe("the chart of expiries per week", () => {
  const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
  const day = (iso: string) => `${Number(iso.slice(8, 10))} ${MONTHS[Number(iso.slice(5, 7)) - 1]}`;

  test("nothing expiring: says so, and draws no bar out of the plot (no NaN)", async () => {
    const { user } = await newOrganization();
    const page = (await user.browser.get("/?mode=live")).text;
    const svg = /<svg[\s\S]*?<\/svg>/.exec(page)?.[0] ?? "";
    expect(svg).toContain("No certificate expires in the next 12 weeks.");
    expect(svg).not.toContain("NaN");
    expect(svg).not.toContain('<text class="value"');
  });

  test("one certificate: described in the singular, its week named by day and month, only its week labelled with a count", async () => {
    const { user, scope } = await newOrganization();
    await seed(scope, { domain: "soon.example.com", notAfter: Date.now() + 10 * DAY });
    const page = (await user.browser.get("/?mode=live")).text;
    const svg = /<svg[\s\S]*?<\/svg>/.exec(page)?.[0] ?? "";
    const from = /data-from="([^"]+)" data-count="1"/.exec(svg)?.[1];
    expect(from).toBeDefined();
    expect(svg).toContain(`<desc id="chart-desc">1 certificate expires in the next 12 weeks: 1 in the week from ${day(from!)}.</desc>`);
    expect(svg.match(/<text class="value"/g)?.length).toBe(1);
  });
});
