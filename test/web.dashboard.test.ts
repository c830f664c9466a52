/**
 * The settings area of CONTRACT §17, in-process on a libSQL file: changing one's own password, the
 * dashboard's counts, chart, search, filters and pages (beyond 1,000 certificates), a certificate's
 * page with "Check now", and the Channels tab with "Send test". Every action goes through the API's
 * pipeline as the signed-in user, so members only read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let transports: ReturnType<typeof createTransports>;
let owner: WebUser;
let member: WebUser;
const now = Date.now();
const live = () => ({ organizationId: h.org.id, mode: "live" as "live" | "test" });

beforeAll(async () => {
  transports = await loopbackTransports();
  h = await createHarness({ store: "libsql", passwords: quickPasswords, transports, deliveryTimeoutMs: 1000, limits: { requestsPerMinute: 100_000, certificates: 100_000 } });
  owner = await signedInUser(h, "owner");
  member = await signedInUser(h, "member");
});
afterAll(async () => {
  await h?.close();
  await transports?.close();
});

/** Certificates written straight to the store (the API's add would retrieve each over TLS). */
async function seed(count: number, overrides: (i: number) => Parameters<typeof certificateRecord>[1], scope = live()) {
  for (let i = 0; i < count; i++) {
    const record = certificateRecord(scope, { lastCheckedAt: now, notBefore: now - 30 * DAY, ...overrides(i) });
    expect(await h.store.certificates.insert(record, { limit: 100_000, events: [] })).toBe("created");
  }
}

describe("changing one's own password", () => {
  test("with the current password: the new one signs in, the old one does not, and other sessions end", async () => {
    const user = await signedInUser(h, "member");
    const elsewhere = new WebClient(h.app);
    expect((await elsewhere.signIn(user.email, PASSWORD)).status).toBe(303);
    const page = await user.browser.get("/settings/account");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<label for="current-password">Current password</label>');
    expect(page.text).toContain('<label for="new-password">New password</label>');

    const changed = await user.browser.post("/settings/account/password", { current: PASSWORD, next: "a-brand-new-passw0rd", confirm: "a-brand-new-passw0rd" });
    expect({ status: changed.status, location: changed.headers.get("location") }).toEqual({ status: 303, location: "/settings/account?notice=password-changed" });
    expect(changed.setCookies.get("certkeeper_session")).toMatch(/HttpOnly; SameSite=Strict/);
    expect((await user.browser.follow(changed)).text).toContain("Your password was changed.");
    // The other browser's session ended; this one carries on with its new cookie.
    expect((await elsewhere.get("/")).status).toBe(303);
    expect((await user.browser.get("/")).status).toBe(200);
    expect((await new WebClient(h.app).signIn(user.email, PASSWORD)).status).toBe(401);
    expect((await new WebClient(h.app).signIn(user.email, "a-brand-new-passw0rd")).status).toBe(303);
  });

  test("refuses a wrong current password, two new ones that differ, and a short one, changing nothing", async () => {
    const user = await signedInUser(h, "admin");
    const attempt = (form: Record<string, string>) => user.browser.post("/settings/account/password", form);
    const wrong = await attempt({ current: "not-the-passw0rd", next: "another-passw0rd", confirm: "another-passw0rd" });
    expect(wrong.status).toBe(400);
    expect(wrong.text).toContain("The current password is wrong");
    const differ = await attempt({ current: PASSWORD, next: "another-passw0rd", confirm: "another-passw0rd!" });
    expect([differ.status, differ.text.includes("The two new passwords differ")]).toEqual([400, true]);
    const short = await attempt({ current: PASSWORD, next: "short", confirm: "short" });
    expect([short.status, short.text.includes("10 to 1024 characters")]).toEqual([400, true]);
    expect((await new WebClient(h.app).signIn(user.email, PASSWORD)).status).toBe(303);
  });

  test("guessing the current password is slowed down like sign-in, and a post from elsewhere is refused", async () => {
    const user = await signedInUser(h, "member");
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await user.browser.post("/settings/account/password", { current: `guess-number-${i}`, next: "x".repeat(12), confirm: "x".repeat(12) })).status);
    expect(statuses.slice(0, 5)).toEqual([400, 400, 400, 400, 400]);
    expect(statuses.at(-1)).toBe(429);
    expect((await user.browser.post("/settings/account/password", { current: PASSWORD, next: "y".repeat(12), confirm: "y".repeat(12) }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await user.browser.post("/settings/account/password", { current: PASSWORD, next: "y".repeat(12), confirm: "y".repeat(12) }, { csrf: null })).status).toBe(403);
  });
});

describe("the dashboard", () => {
  let org: { id: string };
  let viewer: WebUser;
  beforeAll(async () => {
    // An organization of its own, so the counts are exactly what this test seeds.
    org = await h.core.services.admin.createOrganization({ name: "Fleet", plan: "enterprise", limits: { requestsPerMinute: 100_000 } });
    viewer = await signedInUser(h, "owner", org.id);
    const scope = { organizationId: org.id, mode: "live" as "live" | "test" };
    await seed(1_030, (i) => ({ domain: `host-${String(i).padStart(4, "0")}.fleet.example`, notAfter: now + (100 + i) * DAY }), scope); // valid
    await seed(3, (i) => ({ domain: `soon-${i}.fleet.example`, notAfter: now + (2 + 7 * i) * DAY }), scope); // expiring, weeks 0, 1, 2
    await seed(2, (i) => ({ domain: `gone-${i}.fleet.example`, notAfter: now - (i + 1) * DAY }), scope); // expired
    await seed(1, () => ({ domain: "self.fleet.example", notAfter: now + 50 * DAY, problem: "self_signed" }), scope); // invalid, week 7
    await seed(1, () => ({ domain: "down.fleet.example", notAfter: now + 80 * DAY, failure: "timeout" }), scope); // unreachable, week 11
    await seed(4, (i) => ({ domain: `test-${i}.fleet.example`, notAfter: now + 3 * DAY }), { organizationId: org.id, mode: "test" });
  });

  test("shows the count of each status, each linking to the list filtered by it", async () => {
    const page = await viewer.browser.get("/?mode=live");
    expect(page.status).toBe(200);
    expect(page.text).toContain("1037 certificates (live)");
    const count = (status: string) => new RegExp(`href="/\\?mode=live&amp;status=${status}" data-status="${status}">\\s*<span class="n">(\\d+)</span>`).exec(page.text)?.[1];
    expect(["valid", "expiring", "expired", "invalid", "unreachable"].map((s) => [s, count(s)])).toEqual([
      ["valid", "1030"], ["expiring", "3"], ["expired", "2"], ["invalid", "1"], ["unreachable", "1"],
    ]);
  });

  test("draws the 12 weeks as SVG bars whose counts add up to the certificates expiring in those weeks", async () => {
    const page = await viewer.browser.get("/?mode=live");
    const bars = [...page.text.matchAll(/<rect class="bar[^"]*"[^>]*data-week="(\d+)"[^>]*data-count="(\d+)"/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(bars.map(([week]) => week)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    const counts = bars.map(([, n]) => n);
    expect(counts).toEqual([1, 1, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1]);
    expect(counts.reduce((a, b) => a! + b!, 0)).toBe(5);
    expect(page.text).toContain('role="img" aria-labelledby="chart-title chart-desc" data-total="5"');
    expect(page.text).toContain("5 certificates expire in the next 12 weeks");
    const testPage = await viewer.browser.get("/?mode=test");
    expect(testPage.text).toContain('data-total="4"');
  });

  test("pages through more than 1,000 certificates by cursor, each once", async () => {
    const seen: string[] = [];
    let path: string | null = "/?mode=live";
    let pages = 0;
    while (path) {
      const page = await viewer.browser.get(path);
      expect(page.status).toBe(200);
      seen.push(...[...page.text.matchAll(/<tr data-certificate-id="(cert_\w+)"/g)].map((m) => m[1]!));
      const next = /<a rel="next" href="([^"]+)">Next page<\/a>/.exec(page.text)?.[1];
      path = next ? next.replaceAll("&amp;", "&") : null;
      if (pages++ > 0) expect(page.text).toContain(">First page</a>");
    }
    expect(pages).toBe(21);
    expect(seen).toHaveLength(1037);
    expect(new Set(seen).size).toBe(1037);
  });

  test("finds certificates by domain and by status, together, and keeps the filters in the form", async () => {
    const byDomain = await viewer.browser.get("/?mode=live&domain=SOON-");
    expect([...byDomain.text.matchAll(/<tr data-certificate-id=/g)]).toHaveLength(3);
    expect(byDomain.text).toContain('name="domain" type="search" value="SOON-"');
    const byStatus = await viewer.browser.get("/?mode=live&status=expired");
    expect([...byStatus.text.matchAll(/data-status="expired">\n<td data-label="Status">/g)]).toHaveLength(2);
    expect(byStatus.text).toContain('<option value="expired" selected>expired</option>');
    const both = await viewer.browser.get("/?mode=live&status=expiring,invalid&domain=self");
    expect([...both.text.matchAll(/<tr data-certificate-id=/g)]).toHaveLength(1);
    const none = await viewer.browser.get("/?mode=live&domain=nothing-like-this");
    expect(none.text).toContain("No certificate matches these filters.");
  });

  test("a filter the API refuses shows the API's message, not a crash", async () => {
    const page = await viewer.browser.get("/?mode=live&status=fine");
    expect(page.status).toBe(400);
    expect(page.text).toContain("Query parameter &quot;status&quot; has unknown value &quot;fine&quot;");
    expect((await viewer.browser.get("/?mode=live&cursor=not-a-cursor")).status).toBe(400);
  });
});

describe("a certificate's page", () => {
  let server: TlsTestServer;
  let certificate: any;
  beforeAll(async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `page.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(now + 5 * DAY + 3_600_000) });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    certificate = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, name: "The page" } }), 201);
  });
  afterAll(() => server?.close());

  test("shows every field of GET, the chain, and the certificate's recent events", async () => {
    const full = expectData(await h.request("GET", `/v1/certificates/${certificate.id}`), 200);
    const page = await member.browser.get(`/certificates/${certificate.id}?mode=live`);
    expect(page.status).toBe(200);
    const label = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase().replace(/^./, (c) => c.toUpperCase());
    for (const key of Object.keys(full).filter((k) => k !== "chain" && k !== "endpoints")) expect(page.text).toContain(`<dt>${label(key)}</dt>`);
    expect(page.text).toMatch(new RegExp(`<dd[^>]*>${full.serialNumber}</dd>`));
    expect(page.text).toContain('<h2 id="chain-heading">Chain sent by the server</h2>');
    expect(page.text).toContain('<td data-label="Subject">certkeeper Test RSA CA</td>');
    // Added with 5 days left: one certificate.expiring event, for the 7-day threshold.
    expect(page.text).toMatch(/<td data-label="Event"><code>certificate\.expiring<\/code><\/td><td data-label="Details">threshold 7 days<\/td>/);
    // A member reads, without the button.
    expect(page.text).not.toContain(">Check now</button>");
  });

  test("Check now re-checks at once for owners and admins; a member's post is refused", async () => {
    const before = expectData(await h.request("GET", `/v1/certificates/${certificate.id}`), 200).lastCheckedAt;
    const page = await owner.browser.get(`/certificates/${certificate.id}?mode=live`);
    expect(page.text).toContain(">Check now</button>");
    await Bun.sleep(5);
    const checked = await owner.browser.post(`/certificates/${certificate.id}/check`, { mode: "live" });
    expect({ status: checked.status, location: checked.headers.get("location") }).toEqual({
      status: 303,
      location: `/certificates/${certificate.id}?mode=live&notice=certificate-checked`,
    });
    expect((await owner.browser.follow(checked)).text).toContain("The certificate was checked just now.");
    expect(expectData(await h.request("GET", `/v1/certificates/${certificate.id}`), 200).lastCheckedAt > before).toBe(true);
    await member.browser.get(`/certificates/${certificate.id}?mode=live`);
    expect((await member.browser.post(`/certificates/${certificate.id}/check`, { mode: "live" })).status).toBe(403);
  });

  test("another organization's certificate, and a certificate of the other mode, are not found", async () => {
    const other = await h.core.services.admin.createOrganization({ name: "Other" });
    const stranger = await signedInUser(h, "owner", other.id);
    expect((await stranger.browser.get(`/certificates/${certificate.id}?mode=live`)).status).toBe(404);
    expect((await owner.browser.get(`/certificates/${certificate.id}?mode=test`)).status).toBe(404);
  });
});

describe("the Channels tab", () => {
  let receiver: HttpReceiver;
  beforeAll(async () => {
    receiver = await startHttpReceiver();
  });
  afterAll(() => receiver?.close());

  test("Send test delivers a test event to that channel and says how it went", async () => {
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Receiver", config: { url: `${receiver.url}/hook` } } }), 201);
    const page = await owner.browser.get("/channels?mode=live");
    expect(page.text).toContain(`<form method="post" action="/channels/${channel.id}/test">`);
    const sent = await owner.browser.post(`/channels/${channel.id}/test`, { mode: "live" });
    expect(sent.status).toBe(200);
    expect(sent.text).toContain("The test notification reached “Receiver” (it answered 200).");
    await receiver.waitFor(1, 5000);
    expect(JSON.parse(receiver.requests.at(-1)!.body).type).toBe("test");
  });

  test("a failing channel's test shows the failure; members see no button and their post is refused", async () => {
    const channel = expectData(
      await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Nowhere", config: { url: `http://nowhere.${TEST_DOMAIN}:9/hook` } } }),
      201,
    );
    const sent = await owner.browser.post(`/channels/${channel.id}/test`, { mode: "live" });
    expect(sent.text).toContain("The test notification to “Nowhere” failed:");
    const page = await member.browser.get("/channels?mode=live");
    expect(page.text).toContain("Nowhere");
    expect(page.text).not.toContain(`action="/channels/${channel.id}/test"`);
    expect((await member.browser.post(`/channels/${channel.id}/test`, { mode: "live" })).status).toBe(403);
  });
});

describe("the Watches tab", () => {
  test("lists the mode's Certificate Transparency watches; other modes' are not shown", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "watched.example", autoMonitor: true } }), 201);
    const page = await member.browser.get("/watches?mode=live");
    expect(page.status).toBe(200);
    expect(page.text).toContain('<a href="/watches" aria-current="page">Watches</a>');
    const row = new RegExp(`<tr data-watch-id="${watch.id}">([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
    expect(row).toStartWith('<td data-label="Domain">watched.example</td><td data-label="Subdomains">yes</td><td data-label="Adds what it finds">yes</td>');
    expect((await member.browser.get("/watches?mode=test")).text).not.toContain("watched.example");
  });
});

describe("the Watches tab's Poll now", () => {
  test("makes the watch due at once for owners and admins; members see no button and are refused", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "poll-now.example" } }), 201);
    // Due a day ahead, as after a poll.
    const scope = { organizationId: h.org.id, mode: "live" as const };
    await pollFinishedADayAgo(h.store, scope, watch.id);
    const page = await owner.browser.get("/watches?mode=live");
    expect(page.text).toContain(`<form method="post" action="/watches/${watch.id}/poll">`);
    const polled = await owner.browser.post(`/watches/${watch.id}/poll`, { mode: "live" });
    expect({ status: polled.status, location: polled.headers.get("location") }).toEqual({ status: 303, location: "/watches?mode=live&notice=watch-polled" });
    expect((await owner.browser.follow(polled)).text).toContain("The watch is being polled now");
    expect((await h.store.watches.get(scope, watch.id))!.nextPollAt).toBeLessThanOrEqual(Date.now());

    const memberPage = await member.browser.get("/watches?mode=live");
    expect(memberPage.text).toContain("poll-now.example");
    expect(memberPage.text).not.toContain(`action="/watches/${watch.id}/poll"`);
    expect((await member.browser.post(`/watches/${watch.id}/poll`, { mode: "live" })).status).toBe(403);
    expect((await owner.browser.post("/watches/wch_0000000000000000missing/poll", { mode: "live" })).status).toBe(404);
  });
});

/** Leases the watch and saves a poll that makes it due a day from now, as a finished poll does. */
async function pollFinishedADayAgo(store: Harness["store"], scope: { organizationId: string; mode: "live" }, id: string) {
  const now = Date.now();
  const claimed = (await store.watches.claimDue({ owner: "test", now, leaseUntil: now + 60_000, limit: 1000 })).find((w) => w.id === id)!;
  const saved = await store.watches.savePoll(
    { id, owner: "test", cursor: claimed.cursor, newIssuances: 0, baselineDone: true, pendingNames: [], lastPolledAt: now, lastError: null, nextPollAt: now + DAY, release: true, updatedAt: now },
    [],
  );
  expect(saved).toBe(true);
  expect((await store.watches.get(scope, id))!.nextPollAt).toBe(now + DAY);
}
