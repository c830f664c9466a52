/** Rendering events for channels: webhook (Standard Webhooks signed), Discord, Slack and email. */
import { describe, expect, test } from "bun:test";
import { Webhook } from "standardwebhooks";
import type { ChannelRecord, ChannelType, EventRecord, EventType } from "../core/base/records.ts";
import type { CertificateView } from "../core/schemas/certificate.ts";
import { renderNotification, webhookBody } from "../core/notify/payloads.ts";
import { pagerdutyRequests, unresolvedByFilter } from "../core/notify/pagerduty_payload.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { newSigningSecret, signWebhook } from "../core/notify/webhook_signature.ts";
import type { EmailMessage, OutgoingHttpRequest } from "../core/notify/ports.ts";

const NOW = Date.parse("2025-05-05T09:30:00.000Z");
const CREATED = Date.parse("2025-05-05T09:00:00.000Z");
const MAIL_FROM = "certkeeper@alerts.example";

function certificate(overrides: Partial<CertificateView> = {}): CertificateView {
  return {
    id: "cert_3kT9vQm2Xy7LpA0bN5cZ",
    domain: "example.com",
    name: "example.com",
    status: "expiring",
    daysUntilExpiry: 7,
    expiresAt: "2025-05-12T10:00:00.000Z",
    issuedAt: "2025-02-11T10:00:00.000Z",
    issuer: "Let's Encrypt",
    subject: "example.com",
    subjectAlternativeNames: ["example.com", "www.example.com"],
    serialNumber: "04:A3:1F:9C",
    signatureAlgorithm: "sha256WithRSAEncryption",
    port: 443,
    alertThresholds: [30, 14, 7, 3, 1],
    lastCheckedAt: "2025-05-05T09:00:00.000Z",
    createdAt: "2025-01-01T00:00:00.000Z",
    updatedAt: "2025-05-05T09:00:00.000Z",
    chain: [],
    statusReason: "expiring_soon",
    revocation: { status: "good", source: "ocsp", checkedAt: "2025-05-05T09:00:00.000Z", revokedAt: null, reason: null },
    tags: [],
    mutedUntil: null,
    protocol: "tls",
    connectTo: null,
    mailDomain: null,
    endpoints: [],
    chainExpiresAt: null,
    publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
    tls: { protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" },
    warnings: [],
    alertPolicy: "days",
    renewal: { deadline: "2025-04-25T04:00:00.000Z", source: "lifetime", window: null, explanationUrl: null, state: "overdue", checkedAt: null },
    deployment: null,
    ...overrides,
  };
}

function event(type: EventType, data: Record<string, unknown>): EventRecord {
  return {
    id: "evt_a1B2c3D4e5F6g7H8",
    organizationId: "org_a1B2c3D4e5F6g7H8",
    mode: "live",
    type,
    certificateId: type === "test" ? null : "cert_3kT9vQm2Xy7LpA0bN5cZ",
    data,
    createdAt: CREATED,
  };
}

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

function channel(type: ChannelType, config: Record<string, unknown>): ChannelRecord {
  return {
    id: "ch_Z9y8X7w6V5u4T3s2",
    organizationId: "org_a1B2c3D4e5F6g7H8",
    mode: "live",
    type,
    name: `${type} channel`,
    enabled: true,
    filter: null,
    config,
    signingSecret: type === "webhook" ? SECRET : null,
    createdAt: CREATED,
    updatedAt: CREATED,
  };
}

const DISCORD_URL = "https://discord.com/api/webhooks/123456/s3cr3t-t0ken";
const SLACK_URL = "https://hooks.slack.com/services/T000/B000/XXXXSECRET";
const channels = {
  webhook: channel("webhook", { url: "https://hooks.example.net/certkeeper", headers: { Authorization: "Bearer hunter2" } }),
  discord: channel("discord", { webhookUrl: DISCORD_URL }),
  slack: channel("slack", { webhookUrl: SLACK_URL }),
  email: channel("email", { email: "ops@example.com" }),
};

function http(e: EventRecord, ch: ChannelRecord, now = NOW): OutgoingHttpRequest {
  const rendered = renderNotification(e, ch, { now, mailFrom: MAIL_FROM });
  if (rendered.kind !== "http") throw new Error("expected an HTTP request");
  return rendered.request;
}
function email(e: EventRecord): EmailMessage {
  const rendered = renderNotification(e, channels.email, { now: NOW, mailFrom: MAIL_FROM });
  if (rendered.kind !== "email") throw new Error("expected an email");
  return rendered.message;
}
const discord = (e: EventRecord) => JSON.parse(http(e, channels.discord).body);
const slack = (e: EventRecord) => JSON.parse(http(e, channels.slack).body);

/** One event of every type, with what each must say. */
const CASES: Array<{ event: EventRecord; subject: string; summary: string; label: string; color: number }> = [
  {
    event: event("certificate.expiring", { certificate: certificate(), threshold: 7 }),
    subject: "example.com: certificate expires in 7 days",
    summary: "The TLS certificate for example.com expires in 7 days, on 2025-05-12 10:00 UTC. Renew it before then.",
    label: "Certificate expiring",
    color: 0xf0a30a,
  },
  {
    event: event("certificate.expired", {
      certificate: certificate({ status: "expired", statusReason: "expired", daysUntilExpiry: -1, expiresAt: "2025-05-05T08:00:00.000Z" }),
    }),
    subject: "example.com: certificate expired",
    summary: "The TLS certificate for example.com expired on 2025-05-05 08:00 UTC. Clients now refuse it until it is renewed.",
    label: "Certificate expired",
    color: 0xd64541,
  },
  {
    event: event("certificate.renewed", {
      certificate: certificate({ status: "valid", statusReason: null, daysUntilExpiry: 89, expiresAt: "2025-08-03T10:00:00.000Z", serialNumber: "0B:EE" }),
      previous: { serialNumber: "04:A3:1F:9C", expiresAt: "2025-05-12T10:00:00.000Z" },
    }),
    subject: "example.com: certificate renewed",
    summary: "The TLS certificate for example.com was renewed. The new certificate expires on 2025-08-03 10:00 UTC.",
    label: "Certificate renewed",
    color: 0x2ead5b,
  },
  {
    event: event("certificate.invalid", {
      certificate: certificate({ port: 8443, status: "invalid", statusReason: "self_signed", daysUntilExpiry: 60 }),
    }),
    subject: "example.com:8443: certificate is invalid (self_signed)",
    summary: "The TLS certificate for example.com:8443 is not valid: it is self-signed.",
    label: "Certificate invalid",
    color: 0xd64541,
  },
  {
    event: event("certificate.unreachable", {
      certificate: certificate({ status: "unreachable", statusReason: "timeout", daysUntilExpiry: 60 }),
      error: "example.com:443 did not complete the connection in time",
    }),
    subject: "example.com: certificate check failed (timeout)",
    summary:
      "The TLS certificate for example.com could not be retrieved: the server did not answer in time. The last certificate seen is shown below.",
    label: "Certificate unreachable",
    color: 0xe67e22,
  },
  {
    event: event("certificate.recovered", { certificate: certificate({ status: "valid", statusReason: null, daysUntilExpiry: 60 }) }),
    subject: "example.com: certificate is valid again",
    summary: "The TLS certificate for example.com is valid again. It expires on 2025-05-12 10:00 UTC.",
    label: "Certificate valid again",
    color: 0x2ead5b,
  },
  {
    event: event("certificate.revoked", {
      certificate: certificate({
        status: "revoked",
        statusReason: "revoked",
        daysUntilExpiry: 60,
        revocation: { status: "revoked", source: "ocsp", checkedAt: "2025-05-05T09:00:00.000Z", revokedAt: "2025-05-04T12:00:00.000Z", reason: "keyCompromise" },
      }),
    }),
    subject: "example.com: certificate revoked",
    summary:
      "The TLS certificate for example.com was revoked by its certificate authority. Clients that check revocation refuse it: replace it now.",
    label: "Certificate revoked",
    color: 0xd64541,
  },
  {
    event: event("certificate.issued", {
      watchId: "wch_2bV8nQ4kLm9XpT1cR7dZ",
      domain: "example.com",
      dnsNames: ["shop.example.com"],
      issuer: "Shady Certs Ltd",
      notBefore: "2025-05-05T00:00:00.000Z",
      notAfter: "2025-08-03T00:00:00.000Z",
      fingerprintSha256: null,
      authorizedIssuer: false,
    }),
    subject: "example.com: new certificate issued by Shady Certs Ltd (not an allowed issuer)",
    summary:
      "A new certificate for shop.example.com was logged in Certificate Transparency, issued by Shady Certs Ltd. " +
      "That issuer is not on this watch's allowed list: check who requested it.",
    label: "New certificate issued",
    color: 0x8b5cf6,
  },
  {
    event: event("certificate.renewal_overdue", {
      certificate: certificate({ statusReason: "renewal_overdue", daysUntilExpiry: 7 }),
      deadline: "2025-04-25T04:00:00.000Z",
      source: "lifetime",
      window: null,
      daysUntilExpiry: 7,
    }),
    subject: "renewal overdue: example.com still serves the certificate that should have been replaced by 2025-04-25 04:00 UTC",
    summary:
      "The TLS certificate for example.com should have been renewed by 2025-04-25 04:00 UTC and is still served; it expires on " +
      "2025-05-12 10:00 UTC (in 7 days). Check that its ACME client is running and that the renewed certificate is installed.",
    label: "Renewal overdue",
    color: 0xe67e22,
  },
  {
    event: event("certificate.renewal_requested", {
      certificate: certificate({ statusReason: "renewal_requested", daysUntilExpiry: 7 }),
      window: { start: "2025-05-04T00:00:00.000Z", end: "2025-05-05T00:00:00.000Z" },
      explanationUrl: "https://ca.example/incident",
    }),
    subject: "example.com: the certificate authority asks for early renewal by 2025-05-05 00:00 UTC",
    summary:
      "The certificate authority of example.com asks, in its renewal information, for this certificate to be replaced early, " +
      "by 2025-05-05 00:00 UTC, usually before it revokes it. Renew it now; it expires on 2025-05-12 10:00 UTC.",
    label: "Early renewal requested",
    color: 0xe67e22,
  },
  {
    event: event("certificate.not_deployed", {
      certificate: certificate({ status: "valid", statusReason: null, daysUntilExpiry: 7 }),
      deployment: {
        issuedAt: "2025-05-03T09:00:00.000Z",
        fingerprintSha256: "AB:CD",
        notAfter: "2025-08-01T09:00:00.000Z",
        issuer: "Let's Encrypt",
        seenAt: "2025-05-04T09:00:00.000Z",
        servedBy: 1,
        endpoints: 3,
      },
      lagging: ["203.0.113.7", "203.0.113.8"],
    }),
    subject: "example.com: new certificate not deployed on 2 addresses",
    summary:
      "A certificate was issued for example.com on 2025-05-03 09:00 UTC, but 203.0.113.7, 203.0.113.8 still serve the old one, " +
      "which expires on 2025-05-12 10:00 UTC. Install the new certificate there (and reload the server that serves it).",
    label: "New certificate not deployed",
    color: 0xf0a30a,
  },
  {
    event: event("test", {}),
    subject: "certkeeper test notification",
    summary: "This is a test notification from certkeeper. This channel is set up correctly.",
    label: "Test notification",
    color: 0x3b82f6,
  },
];

const escapeDiscord = (text: string) => text.replace(/[\\*_~`|[\]<]/g, "\\$&");

describe("webhook signature", () => {
  test("signWebhook() reproduces the Standard Webhooks specification's test vector", () => {
    expect(
      signWebhook({ secret: SECRET, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: '{"test": 2432232314}' }),
    ).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  test("newSigningSecret() makes whsec_ secrets of 24 random bytes that the standardwebhooks library accepts", () => {
    const secret = newSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(24);
    expect(newSigningSecret()).not.toBe(secret);
    const signed = signWebhook({ secret, id: "evt_1", timestamp: 1700000000, body: "{}" });
    expect(new Webhook(secret).sign("evt_1", new Date(1700000000 * 1000), "{}")).toBe(signed);
  });
});

describe("webhook channel", () => {
  test("renders the body exactly and signs it so the standardwebhooks library verifies it", () => {
    const now = Date.now();
    const e = CASES[0]!.event;
    const request = http(e, channels.webhook, now);
    expect(request.url).toBe("https://hooks.example.net/certkeeper");
    expect(JSON.parse(request.body)).toEqual({
      id: "evt_a1B2c3D4e5F6g7H8",
      type: "certificate.expiring",
      createdAt: "2025-05-05T09:00:00.000Z",
      data: { certificate: certificate(), threshold: 7 },
    });
    expect(Object.keys(JSON.parse(request.body))).toEqual(["id", "type", "createdAt", "data"]);
    expect(request.body).toBe(webhookBody(e));
    const timestamp = String(Math.floor(now / 1000));
    expect(request.headers).toEqual({
      "content-type": "application/json",
      Authorization: "Bearer hunter2",
      "webhook-id": "evt_a1B2c3D4e5F6g7H8",
      "webhook-timestamp": timestamp,
      "webhook-signature": signWebhook({ secret: SECRET, id: e.id, timestamp: Number(timestamp), body: request.body }),
    });
    expect(new Webhook(SECRET).verify(request.body, request.headers)).toEqual(JSON.parse(request.body));
    expect(() => new Webhook(newSigningSecret()).verify(request.body, request.headers)).toThrow();
  });

  test("renders every event type with its data as given", () => {
    for (const { event: e } of CASES) {
      const body = JSON.parse(http(e, channels.webhook).body);
      expect(body).toEqual({ id: e.id, type: e.type, createdAt: "2025-05-05T09:00:00.000Z", data: e.data });
    }
  });

  test("a channel header cannot replace Content-Type or a webhook-* header", () => {
    const ch = channel("webhook", {
      url: "http://hooks.example.net/",
      headers: { "Content-Type": "text/plain", "WEBHOOK-ID": "forged", "X-Team": "ops" },
    });
    const { headers } = http(CASES[0]!.event, ch);
    expect(Object.keys(headers).sort()).toEqual(
      ["X-Team", "content-type", "webhook-id", "webhook-signature", "webhook-timestamp"].sort(),
    );
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["webhook-id"]).toBe("evt_a1B2c3D4e5F6g7H8");
  });

  test("the signing secret appears in no header but the signature, and nowhere in the body", () => {
    const request = http(CASES[0]!.event, channels.webhook);
    const secretPart = SECRET.slice("whsec_".length);
    expect(request.body).not.toContain(secretPart);
    expect(JSON.stringify(request.headers)).not.toContain(secretPart);
  });
});

describe("discord channel", () => {
  for (const c of CASES) {
    test(`${c.event.type}: content, embed title, description, colour, fields and timestamp`, () => {
      const payload = discord(c.event);
      expect(Object.keys(payload).sort()).toEqual(["allowed_mentions", "content", "embeds"]);
      expect(payload.content).toBe(escapeDiscord(c.subject));
      expect(payload.allowed_mentions).toEqual({ parse: [] });
      expect(payload.embeds).toHaveLength(1);
      const embed = payload.embeds[0];
      expect(embed.title).toBe(c.label);
      expect(embed.description).toBe(escapeDiscord(c.summary));
      expect(embed.color).toBe(c.color);
      expect(embed.timestamp).toBe("2025-05-05T09:00:00.000Z");
      expect(embed.footer).toEqual({ text: "certkeeper · evt_a1B2c3D4e5F6g7H8" });
      for (const field of embed.fields) {
        expect(typeof field.name).toBe("string");
        expect(field.value.length).toBeGreaterThan(0);
        expect(field.value.length).toBeLessThanOrEqual(1024);
      }
    });
  }

  test("certificate.expiring names the domain, status, expiry, issuer and the threshold", () => {
    const fields = discord(CASES[0]!.event).embeds[0].fields;
    expect(fields.map((f: { name: string; value: string }) => [f.name, f.value])).toEqual([
      ["Domain", "example.com"],
      ["Status", "expiring (expiring\\_soon)"],
      ["Expires", "2025-05-12 10:00 UTC (in 7 days)"],
      ["Issuer", "Let's Encrypt"],
      ["Serial number", "04:A3:1F:9C"],
      ["Alert threshold", "7 days"],
    ]);
  });

  test("certificate.renewed shows the previous serial and expiry; unreachable shows the error", () => {
    const renewed = discord(CASES[2]!.event).embeds[0].fields;
    expect(renewed).toContainEqual({ name: "Previous serial number", value: "04:A3:1F:9C", inline: true });
    expect(renewed).toContainEqual({ name: "Previous expiry", value: "2025-05-12 10:00 UTC", inline: true });
    const unreachable = discord(CASES[4]!.event).embeds[0].fields;
    expect(unreachable).toContainEqual({
      name: "Error",
      value: "example.com:443 did not complete the connection in time",
      inline: false,
    });
  });

  test("a test event names the channel it was sent to", () => {
    const e = event("test", {
      message: "This is a test notification from certkeeper: this channel works.",
      channel: { id: "ch_Z9y8X7w6V5u4T3s2", name: "Ops _alerts_", type: "discord" },
    });
    expect(discord(e).embeds[0].fields).toEqual([{ name: "Channel", value: "Ops \\_alerts\\_", inline: true }]);
    expect(email(e).text).toContain("Channel: Ops _alerts_\n");
    expect(slack(e).blocks[1]).toEqual({ type: "section", fields: [{ type: "mrkdwn", text: "*Channel*\nOps _alerts_" }] });
  });

  test("markdown and mentions from a certificate are escaped and long values are cut to Discord's limits", () => {
    const e = event("certificate.unreachable", {
      certificate: certificate({ status: "unreachable", statusReason: "tls_error", issuer: "**Evil** @everyone <@123> [x](https://evil)" }),
      error: "x".repeat(5000),
    });
    const fields = discord(e).embeds[0].fields;
    expect(fields.find((f: { name: string }) => f.name === "Issuer").value).toBe(
      "\\*\\*Evil\\*\\* @everyone \\<@123> \\[x\\](https://evil)",
    );
    const error = fields.find((f: { name: string }) => f.name === "Error").value;
    expect(error).toHaveLength(1024);
    expect(error.endsWith("…")).toBe(true);
  });

  test("1 day is singular, and 0 days is less than a day", () => {
    const one = event("certificate.expiring", { certificate: certificate({ daysUntilExpiry: 1 }), threshold: 1 });
    const zero = event("certificate.expiring", { certificate: certificate({ daysUntilExpiry: 0 }), threshold: 0 });
    expect(discord(one).content).toBe("example.com: certificate expires in 1 day");
    expect(discord(zero).content).toBe("example.com: certificate expires in less than a day");
    expect(discord(one).embeds[0].fields.at(-1)).toEqual({ name: "Alert threshold", value: "1 day", inline: true });
  });

  test("the webhook URL (a credential) is only the request's URL", () => {
    const request = http(CASES[0]!.event, channels.discord);
    expect(request.url).toBe(DISCORD_URL);
    expect(request.headers).toEqual({ "content-type": "application/json" });
    expect(request.body).not.toContain("s3cr3t-t0ken");
  });
});

describe("slack channel", () => {
  for (const c of CASES) {
    test(`${c.event.type}: text, a mrkdwn section and a context`, () => {
      const payload = slack(c.event);
      expect(Object.keys(payload).sort()).toEqual(["blocks", "text"]);
      expect(payload.text).toBe(c.subject);
      const [first, ...rest] = payload.blocks;
      expect(first).toEqual({ type: "section", text: { type: "mrkdwn", text: `*${c.label}*\n${c.summary}` } });
      expect(rest.at(-1)).toEqual({
        type: "context",
        elements: [{ type: "mrkdwn", text: "certkeeper · evt_a1B2c3D4e5F6g7H8 · 2025-05-05T09:00:00.000Z" }],
      });
      if (c.event.type === "test") {
        expect(rest).toHaveLength(1);
      } else {
        expect(rest[0].type).toBe("section");
        expect(rest[0].fields[0]).toEqual({ type: "mrkdwn", text: `*Domain*\n${c.event.type === "certificate.invalid" ? "example.com:8443" : "example.com"}` });
        expect(rest[0].fields.length).toBeLessThanOrEqual(10);
      }
    });
  }

  test("certificate.expiring lists status, expiry, issuer, serial and threshold as fields", () => {
    expect(slack(CASES[0]!.event).blocks[1].fields.map((f: { text: string }) => f.text)).toEqual([
      "*Domain*\nexample.com",
      "*Status*\nexpiring (expiring_soon)",
      "*Expires*\n2025-05-12 10:00 UTC (in 7 days)",
      "*Issuer*\nLet's Encrypt",
      "*Serial number*\n04:A3:1F:9C",
      "*Alert threshold*\n7 days",
    ]);
  });

  test("&, < and > from a certificate are escaped as Slack asks", () => {
    const e = event("certificate.invalid", {
      certificate: certificate({ status: "invalid", statusReason: "untrusted_issuer", issuer: "<!channel> A & B" }),
    });
    const issuer = slack(e).blocks[1].fields.find((f: { text: string }) => f.text.startsWith("*Issuer*"));
    expect(issuer.text).toBe("*Issuer*\n&lt;!channel&gt; A &amp; B");
    expect(slack(e).text).toBe("example.com: certificate is invalid (untrusted_issuer)");
  });
});

describe("email channel", () => {
  for (const c of CASES) {
    test(`${c.event.type}: subject "${c.subject}", text and HTML parts`, () => {
      const message = email(c.event);
      expect(message.subject).toBe(c.subject);
      expect(message.from).toBe(MAIL_FROM);
      expect(message.to).toBe("ops@example.com");
      expect(message.messageId).toBe("<evt_a1B2c3D4e5F6g7H8+ch_Z9y8X7w6V5u4T3s2@certkeeper>");
      expect(message.text.startsWith(`${c.summary}\n`)).toBe(true);
      expect(message.text).toContain(`Event evt_a1B2c3D4e5F6g7H8 (${c.event.type}) at 2025-05-05T09:00:00.000Z`);
      expect(message.html).toContain(`<p>${c.summary.replace(/'/g, "&#39;")}</p>`);
      expect(message.html).toContain(`<h2 style="font-size:18px;margin:0 0 12px">${c.label}</h2>`);
    });
  }

  test("the text part lists the facts, aligned", () => {
    expect(email(CASES[0]!.event).text).toBe(
      [
        "The TLS certificate for example.com expires in 7 days, on 2025-05-12 10:00 UTC. Renew it before then.",
        "",
        "Domain:          example.com",
        "Status:          expiring (expiring_soon)",
        "Expires:         2025-05-12 10:00 UTC (in 7 days)",
        "Issuer:          Let's Encrypt",
        "Serial number:   04:A3:1F:9C",
        "Alert threshold: 7 days",
        "",
        "Event evt_a1B2c3D4e5F6g7H8 (certificate.expiring) at 2025-05-05T09:00:00.000Z",
        "-- ",
        "certkeeper",
        "",
      ].join("\n"),
    );
  });

  test("subjects: 1 day, less than a day, and a name that differs from the domain", () => {
    const one = event("certificate.expiring", { certificate: certificate({ daysUntilExpiry: 1 }), threshold: 1 });
    const zero = event("certificate.expiring", { certificate: certificate({ daysUntilExpiry: 0 }), threshold: 1 });
    expect(email(one).subject).toBe("example.com: certificate expires in 1 day");
    expect(email(zero).subject).toBe("example.com: certificate expires in less than a day");
    const named = event("certificate.recovered", { certificate: certificate({ name: "Shop", status: "valid", statusReason: null }) });
    expect(email(named).text).toContain("Name:          Shop\n");
  });

  test("every interpolated value is HTML-escaped", () => {
    const e = event("certificate.invalid", {
      certificate: certificate({ status: "invalid", statusReason: "untrusted_issuer", issuer: `<script>alert("x")</script> & 'Co'`, name: "<b>Shop</b>" }),
    });
    const message = email(e);
    expect(message.html).not.toContain("<script>");
    expect(message.html).not.toContain("<b>Shop");
    expect(message.html).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39;");
    expect(message.html).toContain("&lt;b&gt;Shop&lt;/b&gt;");
    expect(message.text).toContain(`Issuer:        <script>alert("x")</script> & 'Co'`);
  });

  test("an expired certificate's expiry reads as days ago", () => {
    const e = event("certificate.expired", {
      certificate: certificate({ status: "expired", statusReason: "expired", daysUntilExpiry: -4, expiresAt: "2025-05-01T08:00:00.000Z" }),
    });
    expect(email(e).text).toContain("Expires:       2025-05-01 08:00 UTC (3 days ago)\n");
  });
});

describe("broken channel configs", () => {
  test("a channel without its address is refused with a clear message", () => {
    const e = CASES[0]!.event;
    expect(() => renderNotification(e, channel("discord", {}), { now: NOW, mailFrom: MAIL_FROM })).toThrow(
      'discord channel "ch_Z9y8X7w6V5u4T3s2" has no config.webhookUrl',
    );
    expect(() => renderNotification(e, { ...channels.webhook, signingSecret: null }, { now: NOW, mailFrom: MAIL_FROM })).toThrow(
      "has no signing secret",
    );
  });
});

describe("PagerDuty dedup keys of Part III's kinds", () => {
  const send = (e: EventRecord) => pagerdutyRequests(e, describeEvent(e), { baseUrl: "https://events.pagerduty.example", routingKey: "R".repeat(32) }).map((r) => JSON.parse(r.body));

  test("overdue and requested trigger <id>:renewal, not_deployed <id>:not_deployed, all warnings; certificate.renewed resolves both", () => {
    const byType = Object.fromEntries(CASES.map((c) => [c.event.type, c.event]));
    for (const [type, key] of [["certificate.renewal_overdue", "renewal"], ["certificate.renewal_requested", "renewal"], ["certificate.not_deployed", "not_deployed"]] as const) {
      expect(send(byType[type]!).map((b) => [b.event_action, b.dedup_key, b.payload.severity])).toEqual([["trigger", `cert_3kT9vQm2Xy7LpA0bN5cZ:${key}`, "warning"]]);
    }
    const resolved = send(byType["certificate.renewed"]!).map((b) => [b.event_action, b.dedup_key]);
    expect(resolved).toContainEqual(["resolve", "cert_3kT9vQm2Xy7LpA0bN5cZ:renewal"]);
    expect(resolved).toContainEqual(["resolve", "cert_3kT9vQm2Xy7LpA0bN5cZ:not_deployed"]);
  });
});

describe("a PagerDuty filter that keeps out what ends its incidents", () => {
  test("names each kind it lets open an incident that no kind it lets through resolves, and what would", () => {
    expect(unresolvedByFilter(["certificate.renewal_overdue", "certificate.unreachable"])).toEqual([
      { opens: "certificate.renewal_overdue", endsWith: ["certificate.renewed"] },
      { opens: "certificate.unreachable", endsWith: ["certificate.recovered"] },
    ]);
    expect(unresolvedByFilter(["certificate.renewal_overdue", "certificate.renewed", "certificate.unreachable", "certificate.recovered"])).toEqual([]);
    // News that opens no incident needs nothing.
    expect(unresolvedByFilter(["certificate.issued", "certificate.renewed"])).toEqual([]);
  });
});

describe("events about the leaf another address serves (data.endpoint)", () => {
  const endpoint = { address: "10.0.0.2", serialNumber: "0C:01", expiresAt: "2025-06-01T00:00:00.000Z" };

  test("renewal_overdue names the address and its leaf's expiry, not the certificate-level leaf's", () => {
    const described = describeEvent(
      event("certificate.renewal_overdue", {
        certificate: certificate({ status: "expiring", statusReason: "renewal_overdue" }),
        deadline: "2025-05-04T00:00:00.000Z",
        source: "lifetime",
        window: null,
        daysUntilExpiry: 26,
        endpoint,
      }),
    );
    expect(described.headline).toBe("renewal overdue: example.com at 10.0.0.2 still serves the certificate that should have been replaced by 2025-05-04 00:00 UTC");
    expect(described.summary).toContain("it expires on 2025-06-01 00:00 UTC (in 26 days)");
    expect(described.summary).not.toContain("2025-05-12");
    expect(described.facts).toContainEqual({ name: "Address", value: "10.0.0.2" });
    expect(described.facts).toContainEqual({ name: "Serial number there", value: "0C:01" });
    expect(described.facts).toContainEqual({ name: "Expires there", value: "2025-06-01 00:00 UTC" });
  });

  test("a revocation or an early-renewal request about such a leaf names the address too", () => {
    for (const type of ["certificate.revoked", "certificate.renewal_requested"] as const) {
      const facts = describeEvent(event(type, { certificate: certificate(), endpoint, window: null, explanationUrl: null })).facts;
      expect(facts).toContainEqual({ name: "Address", value: "10.0.0.2" });
    }
  });
});
