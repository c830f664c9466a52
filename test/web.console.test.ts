/**
 * The settings area as a console (CONTRACT §23), in-process on a libSQL file: the dashboard lists
 * problems first and says when alerts go nowhere or a channel is failing; a certificate's page opens
 * with one plain sentence and edits name, thresholds, tags and mute; channels of every type are added
 * (a webhook's secret shown once), edited without losing their secrets, enabled, disabled and removed;
 * watches are added, edited and removed; a browser's 404 is a page. Every change goes through the API's
 * operation as the signed-in user: its refusals are the API's, and members only read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let transports: ReturnType<typeof createTransports>;
let owner: WebUser;
let member: WebUser;
let receiver: HttpReceiver;
const servers: TlsTestServer[] = [];
const now = Date.now();

beforeAll(async () => {
  transports = await loopbackTransports();
  h = await createHarness({ store: "libsql", passwords: bunPasswords, transports, deliveryTimeoutMs: 1000, limits: { requestsPerMinute: 100_000, channels: 100, watches: 100 } });
  owner = await signedInUser(h, "owner");
  member = await signedInUser(h, "member");
  receiver = await startHttpReceiver();
});

afterAll(async () => {
  await h?.close();
  await transports?.close();
  await Promise.all([...servers.map((s) => s.close()), receiver?.close()]);
});

/** The rows of the dashboard's list, in order: their status and domain. */
const rowsOf = (text: string) =>
  [...text.matchAll(/<tr data-certificate-id="(cert_\w+)" data-status="(\w+)">[\s\S]*?<div class="mono small">([^<:]+):/g)].map((m) => `${m[2]} ${m[3]}`);

describe("the dashboard, problems first", () => {
  let viewer: WebUser;
  let orgId: string;
  beforeAll(async () => {
    // An organization of its own: its certificates, seeded in the store with the states each group needs.
    const org = await h.core.services.admin.createOrganization({ name: "Problems", plan: "enterprise", limits: { requestsPerMinute: 100_000 } });
    orgId = org.id;
    viewer = await signedInUser(h, "owner", org.id);
    const scope = { organizationId: org.id, mode: "live" as const };
    const add = async (domain: string, fields: Parameters<typeof certificateRecord>[1]) => {
      const record = certificateRecord(scope, { domain, name: `Site ${domain}`, lastCheckedAt: now, notBefore: now - 30 * DAY, ...fields });
      expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
    };
    await add("b.valid.example", { notAfter: now + 100 * DAY });
    await add("a.valid.example", { notAfter: now + 100 * DAY });
    await add("late.expiring.example", { notAfter: now + 20 * DAY });
    // 10 days into a 15-day lifetime: expiring by its days, its renewal not overdue yet (due at three quarters).
    await add("soon.expiring.example", { notBefore: now - 10 * DAY, notAfter: now + 5 * DAY });
    await add("mismatch.invalid.example", { notAfter: now + 60 * DAY, problem: "hostname_mismatch" });
    await add("down.unreachable.example", { notAfter: now + 80 * DAY, failure: "timeout" });
    await add("gone.revoked.example", {
      notAfter: now + 50 * DAY,
      revocation: { status: "revoked", source: "ocsp", checkedAt: now, revokedAt: now - DAY, reason: "keyCompromise", validUntil: null },
    });
    await add("recent.expired.example", { notAfter: now - 2 * DAY });
    await add("old.expired.example", { notAfter: now - 5 * DAY });
    // Under the renewal policy, 80 days into a 100-day lifetime: the deadline (75 days) has passed.
    await add("stalled.renewal.example", { notBefore: now - 80 * DAY, notAfter: now + 20 * DAY, alertPolicy: "renewal" });
  });

  const ORDER = [
    "expired old.expired.example",
    "expired recent.expired.example",
    "revoked gone.revoked.example",
    "unreachable down.unreachable.example",
    "invalid mismatch.invalid.example",
    "expiring stalled.renewal.example",
    "expiring soon.expiring.example",
    "expiring late.expiring.example",
    "valid a.valid.example",
    "valid b.valid.example",
  ];

  test("lists expired, revoked, unreachable, invalid, expiring, then valid; soonest first within each, then by domain", async () => {
    const page = await viewer.browser.get("/?mode=live");
    expect(page.status).toBe(200);
    expect(rowsOf(page.text)).toEqual(ORDER);
    // A hostname mismatch that breaks the site now is no longer below the valid certificates; an
    // overdue renewal comes before certificates that are only expiring, though it expires later.
    expect(page.text).toContain("Certificates, problems first");
    const stalled = /<tr data-certificate-id="cert_\w+" data-status="expiring">\n<td data-label="Status">([\s\S]*?)<\/td>\n<td data-label="Certificate"><a[^>]*><strong>Site stalled/.exec(page.text)?.[1];
    expect(stalled).toContain("renewal overdue");
  });

  test("counts renewals overdue and requested beside the statuses, each count a filter", async () => {
    const summary = await (async () => {
      const key = await h.makeKey("member", "live", orgId);
      return expectData(await h.request("GET", "/v1/certificates/summary", { key: key.key }), 200);
    })();
    const page = await viewer.browser.get("/?mode=live");
    const count = /data-renewal="overdue">\s*<span class="n">(\d+)<\/span> renewal overdue/.exec(page.text)?.[1];
    expect(Number(count)).toBe(summary.byRenewal.overdue);
    expect(summary.byRenewal.overdue).toBeGreaterThan(0);
    const filtered = await viewer.browser.get("/?mode=live&renewal=overdue");
    expect(rowsOf(filtered.text)).toHaveLength(summary.byRenewal.overdue);
    expect(rowsOf(filtered.text)).toContain("expiring stalled.renewal.example");
    expect(filtered.text).toContain('<option value="overdue" selected>overdue</option>');
  });

  test("pages keep the order across groups, each certificate once; the status filter keeps it within what it selects", async () => {
    const actor = { user: (await h.store.users.get(viewer.id))!, organization: (await h.store.organizations.get(orgId))! };
    const seen: string[] = [];
    let cursor: string | undefined;
    // Pages of 4, so that the two valid certificates of one expiry meet on one page: the domain decides
    // between equal expiries within a page (across pages the list's own order, expiry then id, holds).
    for (let pages = 0; pages < 10; pages++) {
      const page = await h.core.accounts.console.as(actor, "live").dashboard({ limit: 4, cursor });
      seen.push(...page.certificates.map((c) => `${c.status} ${c.domain}`));
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(ORDER);
    const filtered = await viewer.browser.get("/?mode=live&status=valid,expired");
    expect(rowsOf(filtered.text)).toEqual(ORDER.filter((row) => /^(valid|expired) /.test(row)));
  });

  test("with no channel, a banner says alerts go nowhere; an enabled channel ends it", async () => {
    const page = await viewer.browser.get("/?mode=live");
    expect(page.text).toContain('id="banner-no-channel"');
    expect(page.text).toContain("Alerts go nowhere:");
    expect(page.text).toContain('<a href="/channels?mode=live#add-channel">Add a channel</a>');
    const key = await h.makeKey("owner", "live", orgId);
    const channel = expectData(await h.request("POST", "/v1/channels", { key: key.key, body: { type: "email", name: "Ops", config: { email: "ops@problems.test" } } }), 201);
    expect((await viewer.browser.get("/?mode=live")).text).not.toContain('id="banner-no-channel"');
    // Disabled, it takes no alert: the banner is back.
    expectData(await h.request("PATCH", `/v1/channels/${channel.id}`, { key: key.key, body: { enabled: false } }), 200);
    expect((await viewer.browser.get("/?mode=live")).text).toContain("no notification channel is\nenabled for the live data");
    expectData(await h.request("PATCH", `/v1/channels/${channel.id}`, { key: key.key, body: { enabled: true } }), 200);
    // The test data has none of its own.
    expect((await viewer.browser.get("/?mode=test")).text).toContain('id="banner-no-channel"');
  });

  test("a failing channel shows in a banner, by name, since when and why; a success clears it", async () => {
    const key = await h.makeKey("owner", "live", orgId);
    const hook = expectData(await h.request("POST", "/v1/channels", { key: key.key, body: { type: "webhook", name: "Pager hook", config: { url: `${receiver.url}/pager` } } }), 201);
    receiver.answer = () => ({ status: 502 });
    expect(expectData(await h.request("POST", `/v1/channels/${hook.id}/test`, { key: key.key }), 200).status).toBe("failed");
    const page = await viewer.browser.get("/?mode=live");
    expect(page.text).toContain('id="banner-failing"');
    const banner = /<div class="banner error"[\s\S]*?<\/div>/.exec(page.text)![0];
    expect(banner).toContain("<strong>Pager hook</strong> (webhook), failing since");
    expect(banner).toContain("The endpoint answered HTTP 502");
    const channels = await viewer.browser.get("/channels?mode=live");
    expect(new RegExp(`<tr data-channel-id="${hook.id}">[\\s\\S]*?data-health="failing"><span class="health-failing">Failing since`).test(channels.text)).toBe(true);
    receiver.answer = () => ({ status: 200 });
    expect(expectData(await h.request("POST", `/v1/channels/${hook.id}/test`, { key: key.key }), 200).status).toBe("delivered");
    expect((await viewer.browser.get("/?mode=live")).text).not.toContain('id="banner-failing"');
  });
});

describe("an issuance not yet served everywhere", () => {
  test("the list marks the certificate not deployed, with how many addresses serve the new one; its page says so in words", async () => {
    const org = await h.core.services.admin.createOrganization({ name: "Deploying", plan: "enterprise", limits: { requestsPerMinute: 100_000 } });
    const viewer = await signedInUser(h, "owner", org.id);
    const scope = { organizationId: org.id, mode: "live" as const };
    const record = certificateRecord(scope, { domain: "lb.deploying.example", lastCheckedAt: now, notBefore: now - 30 * DAY, notAfter: now + 60 * DAY });
    record.endpoints = ["192.0.2.1", "192.0.2.2"].map((address) => ({ address, fingerprint: record.fingerprint, details: record.details, problem: null, failure: null, tls: null }));
    record.deployment = { issuedAt: now - 3_600_000, notAfter: now + 90 * DAY, fingerprintSha256: null, issuer: "Let's Encrypt", seenAt: now, announced: false };
    expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
    const list = await viewer.browser.get("/?mode=live");
    expect(list.text).toContain('data-deployment="pending">not deployed: 0 of 2 addresses');
    const page = await viewer.browser.get(`/certificates/${record.id}?mode=live`);
    expect(page.text).toContain("Not deployed yet");
    expect(page.text).toContain("is served by 0 of 2 addresses");
  });
});

describe("a certificate's page", () => {
  let certificateId: string;
  const domain = `mail.console.${TEST_DOMAIN}`;
  beforeAll(async () => {
    const { rsaIntermediate } = await testPki();
    // The server at mail.… presents a certificate for app.…: a host name mismatch.
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`app.console.${TEST_DOMAIN}`], notAfter: new Date(now + 40 * DAY + 3_600_000) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    servers.push(server);
    await owner.browser.get("/");
    const added = await owner.browser.post("/dashboard/certificates", { mode: "live", domain, port: String(server.port), name: "Mail" });
    expect(added.status).toBe(303);
    certificateId = /\/certificates\/(cert_\w+)/.exec(added.headers.get("location")!)![1]!;
  });

  test("opens with one plain sentence of what is wrong and what to do, and shows times in words", async () => {
    const page = await owner.browser.get(`/certificates/${certificateId}?mode=live`);
    expect(page.status).toBe(200);
    const verdict = /<p class="verdict" id="verdict" data-status="invalid">([^<]*)<\/p>/.exec(page.text)?.[1];
    expect(verdict).toBe(`Serves a certificate for app.console.${TEST_DOMAIN}, not ${domain}: install a certificate that names ${domain}.`);
    // The sentence comes right after the heading: the first thing read.
    expect(page.text.indexOf('id="verdict"')).toBeLessThan(page.text.indexOf('id="summary"'));
    const summary = /<dl class="fields" id="summary">([\s\S]*?)<\/dl>/.exec(page.text)![1]!;
    expect(summary).toContain("<dt>Expires</dt><dd>in 40 days");
    expect(summary).toContain('<dt>Last checked</dt><dd><time datetime="');
    expect(summary).toMatch(/>just now<\/time>/);
    // No raw timestamps in what is shown first (they are in "Every field", folded away).
    expect(summary.replace(/<[^>]*>/g, "")).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
  });

  test("the edit form changes name, thresholds, tags and mute through PATCH; the API's refusal is shown with the input kept", async () => {
    const page = await owner.browser.get(`/certificates/${certificateId}?mode=live`);
    expect(page.text).toContain(`<form class="card" method="post" action="/certificates/${certificateId}/edit" id="edit"`);
    const saved = await owner.browser.post(`/certificates/${certificateId}/edit`, {
      mode: "live", name: "Mail server", alertThresholds: "21, 7", tags: "team:mail env:prod", connectTo: "", mute: "7d",
    });
    expect({ status: saved.status, location: saved.headers.get("location") }).toEqual({
      status: 303,
      location: `/certificates/${certificateId}?mode=live&notice=certificate-updated#edit`,
    });
    const stored = expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200);
    expect(stored).toMatchObject({ name: "Mail server", alertThresholds: [21, 7], tags: ["env:prod", "team:mail"], connectTo: null });
    expect(Math.abs(Date.parse(stored.mutedUntil) - (Date.now() + 7 * DAY))).toBeLessThan(60_000);
    const after = await owner.browser.get(`/certificates/${certificateId}?mode=live`);
    expect(after.text).toContain('<span class="badge state-off">muted</span> until');

    const unmuted = await owner.browser.post(`/certificates/${certificateId}/edit`, { mode: "live", name: "Mail server", alertThresholds: "", tags: "", mute: "off" });
    expect(unmuted.status).toBe(303);
    expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200)).toMatchObject({ mutedUntil: null, alertThresholds: [], tags: [] });

    const refused = await owner.browser.post(`/certificates/${certificateId}/edit`, { mode: "live", name: "Mail server", alertThresholds: "7", tags: "Team:Mail", mute: "" });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/<div class="error" role="alert"[^>]*>“Tags” \(its first value\) must be [^<]*<\/div>/);
    expect(refused.text).toContain('name="tags" type="text" autocapitalize="off" spellcheck="false" value="Team:Mail"');
  });

  test("the alert policy is chosen when adding and changed when editing, through the API", async () => {
    const before = expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200);
    const page = await owner.browser.get(`/certificates/${certificateId}?mode=live`);
    expect(page.text).toContain(`<option value="${before.alertPolicy}" selected>`);
    const other = before.alertPolicy === "renewal" ? "days" : "renewal";
    const saved = await owner.browser.post(`/certificates/${certificateId}/edit`, { mode: "live", name: "Mail server", alertThresholds: "7", tags: "", mute: "", alertPolicy: other });
    expect(saved.status).toBe(303);
    expect(expectData(await h.request("GET", `/v1/certificates/${certificateId}`), 200).alertPolicy).toBe(other);
    const dashboard = await owner.browser.get("/?mode=live");
    expect(dashboard.text).toContain('<select id="cert-alert-policy" name="alertPolicy">');
  });

  test("members see no edit form, and their post is refused as a member key's write would be", async () => {
    const page = await member.browser.get(`/certificates/${certificateId}?mode=live`);
    expect(page.text).toContain('id="verdict"');
    expect(page.text).not.toContain(`action="/certificates/${certificateId}/edit"`);
    expect((await member.browser.post(`/certificates/${certificateId}/edit`, { mode: "live", name: "Mine", alertThresholds: "", tags: "" })).status).toBe(403);
  });
});

describe("channels of every type", () => {
  const TELEGRAM_TOKEN = "123456789:AAH-console-b0t-t0ken";
  const SLACK_URL = "https://hooks.slack.com/services/T000/B000/sl4ck-s3cret";
  const forms: Record<string, Record<string, string>> = {
    email: { "config.email": "oncall@acme.test" },
    slack: { "config.webhookUrl": SLACK_URL },
    discord: { "config.webhookUrl": "https://discord.com/api/webhooks/42/d1scord-s3cret" },
    teams: { "config.webhookUrl": "https://prod.example.com/workflows/1/invoke?sig=t3ams-s3cret" },
    telegram: { "config.botToken": TELEGRAM_TOKEN, "config.chatId": "-1001234567890" },
    pagerduty: { "config.routingKey": "0123456789abcdef0123456789abcdef" },
  };

  test("each type is added from its own form; secrets are masked from then on", async () => {
    for (const [type, fields] of Object.entries(forms)) {
      const form = await owner.browser.get(`/channels/new?type=${type}&mode=live`);
      expect({ type, status: form.status }).toEqual({ type, status: 200 });
      const added = await owner.browser.post("/channels", { mode: "live", type, name: `The ${type} channel`, ...fields });
      expect({ type, status: added.status, location: added.headers.get("location") }).toEqual({ type, status: 303, location: "/channels?mode=live&notice=channel-added" });
    }
    const listed = expectData(await h.request("GET", "/v1/channels?limit=100"), 200) as any[];
    const byType = Object.fromEntries(listed.filter((c) => c.name.startsWith("The ")).map((c) => [c.type, c]));
    expect(Object.keys(byType).sort()).toEqual(Object.keys(forms).sort());
    expect(byType.telegram.config).toEqual({ botToken: "********", chatId: -1001234567890 });
    expect(byType.slack.config.webhookUrl).toBe("https://hooks.slack.com/services/T000/B000/********");
    const page = await owner.browser.get("/channels?mode=live");
    for (const secret of ["sl4ck-s3cret", "d1scord-s3cret", "t3ams-s3cret", TELEGRAM_TOKEN, "0123456789abcdef0123456789abcdef"]) expect(page.text).not.toContain(secret);
  });

  test("a webhook's signing secret is shown once, on the page that answers the form, never again", async () => {
    await owner.browser.get("/channels/new?type=webhook&mode=live");
    const added = await owner.browser.post("/channels", { mode: "live", type: "webhook", name: "Receiver", "config.url": `${receiver.url}/hook`, "config.headers": "Authorization: Bearer h00k-t0ken" });
    expect(added.status).toBe(200);
    const secret = /id="signing-secret" type="text" readonly value="(whsec_[0-9A-Za-z+/=]+)"/.exec(added.text)?.[1];
    expect(secret).toBeDefined();
    expect(added.text).toContain("It will not be shown again");
    const list = await owner.browser.get("/channels?mode=live");
    expect(list.text).not.toContain(secret!);
    expect(list.text).not.toContain("h00k-t0ken");
    const channel = (expectData(await h.request("GET", "/v1/channels?limit=100"), 200) as any[]).find((c) => c.name === "Receiver");
    expect(channel.config).toEqual({ url: `${receiver.url}/hook`, headers: { Authorization: "********" } });
    const edit = await owner.browser.get(`/channels/${channel.id}/edit?mode=live`);
    expect(edit.text).not.toContain(secret!);
    expect(edit.text).toContain("Authorization: ********");
  });

  test("editing keeps a secret left masked, changes name, filter and state; enable, disable and remove work from the list", async () => {
    const slack = (expectData(await h.request("GET", "/v1/channels?limit=100"), 200) as any[]).find((c) => c.type === "slack");
    const edit = await owner.browser.get(`/channels/${slack.id}/edit?mode=live`);
    expect(edit.text).toContain('value="https://hooks.slack.com/services/T000/B000/********"');
    const saved = await owner.browser.post(`/channels/${slack.id}/edit`, {
      mode: "live", name: "Team chat", enabled: "1", "config.webhookUrl": "https://hooks.slack.com/services/T000/B000/********",
      "filter.event.certificate.expired": "1", "filter.event.certificate.revoked": "1", "filter.tags": "team:web",
    });
    expect({ status: saved.status, location: saved.headers.get("location") }).toEqual({ status: 303, location: "/channels?mode=live&notice=channel-updated" });
    const stored = (await h.store.channels.get({ organizationId: h.org.id, mode: "live" }, slack.id))!;
    expect(stored.config).toEqual({ webhookUrl: SLACK_URL });
    expect({ name: stored.name, filter: stored.filter, enabled: stored.enabled }).toEqual({
      name: "Team chat",
      filter: { events: ["certificate.expired", "certificate.revoked"], tags: ["team:web"] },
      enabled: true,
    });

    expect((await owner.browser.post(`/channels/${slack.id}/disable`, { mode: "live" })).headers.get("location")).toBe("/channels?mode=live&notice=channel-disabled");
    expect(expectData(await h.request("GET", `/v1/channels/${slack.id}`), 200).enabled).toBe(false);
    expect((await owner.browser.post(`/channels/${slack.id}/enable`, { mode: "live" })).status).toBe(303);
    expect(expectData(await h.request("GET", `/v1/channels/${slack.id}`), 200).enabled).toBe(true);

    const confirm = await owner.browser.get(`/channels/${slack.id}/remove?mode=live`);
    expect(confirm.text).toContain("Remove the channel “Team chat”?");
    expect((await owner.browser.post(`/channels/${slack.id}/remove`, { mode: "live" })).headers.get("location")).toBe("/channels?mode=live&notice=channel-removed");
    expect((await h.request("GET", `/v1/channels/${slack.id}`)).status).toBe(404);
  });

  test("a PagerDuty channel whose filter lets incidents open but keeps out what resolves them says so on the list", async () => {
    const add = async (name: string, events: string[]) =>
      expectData(
        await h.request("POST", "/v1/channels", { body: { type: "pagerduty", name, config: { routingKey: "0123456789abcdef0123456789abcdef" }, filter: { events } } }),
        201,
      );
    const open = await add("PD overdue only", ["certificate.renewal_overdue"]);
    const closed = await add("PD overdue and renewed", ["certificate.renewal_overdue", "certificate.renewed"]);
    const list = await owner.browser.get("/channels?mode=live");
    const row = (id: string) => new RegExp(`<tr data-channel-id="${id}">[\\s\\S]*?</tr>`).exec(list.text)![0];
    expect(row(open.id)).toContain("Incidents opened by renewal_overdue are never resolved: add renewed to its events.");
    expect(row(closed.id)).not.toContain("never resolved");
  });

  test("the API's refusal shows on the form, the name kept and secrets not echoed; a member's add is refused", async () => {
    await owner.browser.get("/channels/new?type=email&mode=live");
    const bad = await owner.browser.post("/channels", { mode: "live", type: "email", name: "Broken mail", "config.email": "not an address" });
    expect(bad.status).toBe(400);
    expect(bad.text).toMatch(/<div class="error" role="alert"[^>]*>[^<]*email[^<]*<\/div>/);
    expect(bad.text).toContain('value="Broken mail"');
    const badKey = await owner.browser.post("/channels", { mode: "live", type: "pagerduty", name: "Short key", "config.routingKey": "t00-short-s3cret" });
    expect(badKey.status).toBe(400);
    expect(badKey.text).not.toContain("t00-short-s3cret");
    await member.browser.get("/channels?mode=live");
    expect((await member.browser.post("/channels", { mode: "live", type: "email", name: "Mine", "config.email": "me@acme.test" })).status).toBe(403);
    expect((await owner.browser.get("/channels/new?type=carrier-pigeon&mode=live")).status).toBe(400);
  });
});

describe("watches", () => {
  test("added, edited and removed from the Watches tab, through the watch operations", async () => {
    await owner.browser.get("/watches?mode=live");
    const added = await owner.browser.post("/watches", { mode: "live", domain: "watch-console.example", includeSubdomains: "1", allowedIssuers: "" });
    expect(added.headers.get("location")).toBe("/watches?mode=live&notice=watch-added");
    const watch = (expectData(await h.request("GET", "/v1/watches?limit=100"), 200) as any[]).find((w) => w.domain === "watch-console.example");
    expect(watch).toMatchObject({ includeSubdomains: true, autoMonitor: false, allowedIssuers: [] });
    const duplicate = await owner.browser.post("/watches", { mode: "live", domain: "watch-console.example", includeSubdomains: "1" });
    expect(duplicate.status).toBe(409);
    expect(duplicate.text).toContain("is already watched");

    await owner.browser.get(`/watches/${watch.id}/edit?mode=live`);
    const saved = await owner.browser.post(`/watches/${watch.id}/edit`, { mode: "live", autoMonitor: "1", allowedIssuers: "Let's Encrypt\r\nDigiCert Inc" });
    expect(saved.headers.get("location")).toBe("/watches?mode=live&notice=watch-updated");
    expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200)).toMatchObject({
      includeSubdomains: false,
      autoMonitor: true,
      allowedIssuers: ["Let's Encrypt", "DigiCert Inc"],
    });
    await owner.browser.get(`/watches/${watch.id}/remove?mode=live`);
    expect((await owner.browser.post(`/watches/${watch.id}/remove`, { mode: "live" })).headers.get("location")).toBe("/watches?mode=live&notice=watch-removed");
    expect((await h.request("GET", `/v1/watches/${watch.id}`)).status).toBe(404);
  });
});

describe("a missing address", () => {
  test("a browser gets a page; an API client (JSON, or curl's */*) gets the API's JSON 404", async () => {
    const browserPage = await h.app.handle(new Request("http://localhost/no-such-page", { headers: { accept: "text/html,application/xhtml+xml,*/*;q=0.8" } }));
    expect(browserPage.status).toBe(404);
    expect(browserPage.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const text = await browserPage.text();
    expect(text).toContain("<h1>Page not found</h1>");
    expect(text).toContain('<a href="/">Back to the dashboard</a>');
    for (const accept of ["application/json", "*/*", ""]) {
      const api = await h.app.handle(new Request("http://localhost/no-such-page", { headers: accept ? { accept } : {} }));
      expect({ accept, status: api.status, type: api.headers.get("content-type") }).toEqual({ accept, status: 404, type: "application/json; charset=utf-8" });
      expect((await api.json()).error.code).toBe("not_found");
    }
  });
});
