/**
 * The Part III kinds (hostile data escaped on Slack and in email, channel filters
 * and muting), through the real Deliverer and receivers on 127.0.0.1.
 */
import { afterEach, expect, test } from "bun:test";
import { parseFilter } from "../core/channels/channel_filter.ts";
import { certificate, events, humanTexts, world, type World } from "./support/notify_world.ts";

const ALL = ["slack", "discord", "teams", "telegram", "pagerduty", "email"] as const;

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

const HOSTILE = "Evil <!channel> <https://x.test|click> *CA* & <script>alert(1)</script>\u202E\r\nBcc: x@y";

test("hostile issuer, CAA record values, explanation URL and CT issuer are escaped on Slack and in email", async () => {
  // CONTRACT §6: Slack gets the incoming-webhook payload (text plus blocks); §7: email, a text part and an HTML part.
  w = await world(["slack", "email"]);
  const cert = certificate({ issuer: HOSTILE, status: "valid", statusReason: null });
  await w.record("certificate.renewal_blocked", { certificate: cert, caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: [`0 issue "${HOSTILE}"`], issuerDomain: null } });
  await w.record("certificate.renewal_requested", { certificate: cert, window: { start: "2026-05-05T00:00:00.000Z", end: "2026-05-06T00:00:00.000Z" }, explanationUrl: "https://ca.test/why?a=<!channel>&b=<script>" });
  await w.record("certificate.issued", { watchId: "wat_1", domain: "example.com", dnsNames: ["shop.example.com"], issuer: HOSTILE, notBefore: "2026-05-05T08:00:00.000Z", notAfter: "2026-06-19T08:00:00.000Z", fingerprintSha256: null, authorizedIssuer: false }, { certificateId: null });
  await w.deliverAll();
  expect(w.at("/slack")).toHaveLength(3);
  for (const r of w.at("/slack")) {
    const body = JSON.stringify(r.json);
    expect(body).not.toContain("<!channel>");
    expect(body).not.toContain("<https://x.test|");
    expect(body).not.toContain("<script>");
    expect(body).not.toMatch(/[\u202E\r]/);
  }
  expect(w.smtp.messages).toHaveLength(3);
  for (const m of w.smtp.messages) {
    expect(m.html).not.toContain("<script>");
    expect(m.subject).not.toMatch(/[\r\n\u202E]/);
    expect(m.text).not.toMatch(/\nBcc:/);
  }
});

test("channel filters accept every Part III kind; muted events and certificate.issued under a tag filter go nowhere", async () => {
  // CONTRACT Part III: each new kind "is accepted wherever its kind is (channel filters, ...)"; §16: muted
  // events have "no deliveries"; "an event without a certificate (certificate.issued) matches only filters without tags".
  for (const kind of ["certificate.renewal_overdue", "certificate.renewal_requested", "certificate.not_deployed", "certificate.renewal_blocked", "certificate.issued"]) {
    expect(parseFilter({ events: [kind] }) as unknown).toEqual({ events: [kind] });
  }
  w = await world(["slack", "telegram", "email"], {
    slack: { events: ["certificate.renewal_blocked", "certificate.issued"] },
    telegram: { tags: ["team:web"] },
  });
  const cert = certificate({ status: "valid", statusReason: null });
  await w.record("certificate.renewal_blocked", { certificate: cert, caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], issuerDomain: "letsencrypt.org" } });
  await w.record("certificate.renewal_overdue", { certificate: cert, deadline: "2026-05-04T09:00:00.000Z", source: "lifetime", window: null, daysUntilExpiry: 10 });
  await w.record("certificate.not_deployed", { certificate: cert, deployment: null, lagging: ["127.0.0.2"], muted: true });
  await w.record("certificate.issued", { watchId: "wat_1", domain: "example.com", dnsNames: ["shop.example.com"], issuer: "Let's Encrypt", notBefore: "2026-05-05T08:00:00.000Z", notAfter: "2026-06-19T08:00:00.000Z", fingerprintSha256: null, authorizedIssuer: null }, { certificateId: null });
  await w.deliverAll();
  expect(w.at("/slack").map((r) => r.json.blocks[0].text.text.split("\n")[0])).toEqual(["*Renewal blocked by CAA*", "*New certificate issued*"]);
  expect(w.at("/tg").map((r) => r.json.text.split("\n")[0])).toEqual([expect.stringContaining("CAA"), expect.stringContaining("renewal overdue")]);
  expect(w.smtp.messages).toHaveLength(3);
});

test("every Part III kind reaches every channel type, names the domain, and no text reads undefined, null, NaN or [object Object]", async () => {
  // CONTRACT §16: "Every message names the certificate's domain and what happened."
  w = await world();
  for (const [type, data] of Object.values(events())) {
    await w.record(type, data as Record<string, unknown>, { certificateId: type === "certificate.issued" ? null : undefined });
  }
  await w.deliverAll();
  const texts = humanTexts(w);
  for (const channel of ALL) {
    expect({ channel, n: texts[channel]!.length }).toEqual({ channel, n: 6 });
    for (const text of texts[channel]!) {
      expect(text).toMatch(/example\.com/);
      expect(text).not.toMatch(/\bundefined\b|\bnull\b|NaN|\[object Object\]/);
    }
  }
  expect(w.at("/webhook")).toHaveLength(6);
});

test("each kind's own facts reach the reader (deadline, window, explanation URL, lagging address, CAA records, endpoint)", async () => {
  // CONTRACT §18–§22 data of each kind.
  w = await world(["email", "slack", "telegram", "pagerduty", "teams", "discord"]);
  const e = events();
  const expectations: Array<[readonly [string, unknown], string[]]> = [
    [e.overdueEndpoint, ["127.0.0.2", "2026-05-01 09:00 UTC", "2026-08-01 09:00 UTC"]],
    [e.requested, ["2026-05-06 00:00 UTC", "https://letsencrypt.org/2026/05/05/incident"]],
    [e.notDeployed, ["127.0.0.2", "2026-05-03 09:00 UTC", "1 of 2"]],
    [e.blocked, ['0 issue "digicert.com"', "letsencrypt.org", "example.com"]],
  ];
  for (const [[type, data]] of expectations) await w.record(type as never, data as Record<string, unknown>);
  await w.deliverAll();
  expect(w.smtp.messages).toHaveLength(expectations.length);
  for (let i = 0; i < expectations.length; i++) {
    for (const needle of expectations[i]![1]) {
      expect({ i, has: w.smtp.messages[i]!.text.includes(needle) }).toEqual({ i, has: true });
      expect({ i, tg: w.at("/tg")[i]!.json.text.includes(needle) }).toEqual({ i, tg: true });
    }
  }
});

test("a not_deployed message naming two lagging addresses reads in the plural, and a one-day-left overdue in the singular", async () => {
  // CONTRACT §20: data: { deployment, lagging: [addresses] }.
  w = await world(["telegram"]);
  await w.record("certificate.not_deployed", { ...(events().notDeployed[1] as object), lagging: ["127.0.0.1", "127.0.0.2"] });
  await w.record("certificate.renewal_overdue", { certificate: certificate({ daysUntilExpiry: 1 }), deadline: "2026-05-04T09:00:00.000Z", source: "lifetime", window: null, daysUntilExpiry: 1 });
  await w.deliverAll();
  const [nd, od] = w.at("/tg").map((r) => r.json.text as string);
  expect(nd).toContain("2 addresses");
  expect(nd).toContain("127.0.0.1, 127.0.0.2 still serve the old one");
  expect(od).toContain("in 1 day");
  expect(od).not.toContain("1 days");
});
