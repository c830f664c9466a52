/**
 * What Teams, Telegram and PagerDuty are sent (CONTRACT §16), and the webhook channel's signing and
 * config: the details a receiver or the person reading the alert depends on.
 */
import { describe, expect, test } from "bun:test";
import { renderNotification } from "../core/notify/payloads.ts";
import { signWebhook } from "../core/notify/webhook_signature.ts";
import type { ChannelRecord, EventRecord } from "../core/base/records.ts";
import { certificateView, channelOf, eventOf } from "./support/notify_events.ts";

const OPTIONS = { now: Date.parse("2026-05-05T09:30:00.000Z"), mailFrom: "certkeeper@alerts.example" };

function request(event: EventRecord, channel: ChannelRecord) {
  const n = renderNotification(event, channel, OPTIONS);
  if (n.kind !== "http") throw new Error("expected an HTTP request");
  return n.request;
}

type Block = { type: string; text?: string; color?: string; facts?: Array<{ title: string; value: string }> };

function teams(event: EventRecord) {
  const body = JSON.parse(request(event, channelOf("teams", { webhookUrl: "https://example.webhook.office.com/x" })).body) as {
    type: string;
    attachments: Array<{ contentType: string; content: { type: string; version: string; body: Block[] } }>;
  };
  return body;
}

function telegram(event: EventRecord, chatId: number | string = -1001234567890) {
  return JSON.parse(request(event, channelOf("telegram", { botToken: "123456:ABC-DEF", chatId })).body) as { chat_id: number | string; text: string };
}

const testEvent = (): EventRecord => ({ ...eventOf("test", { channel: { id: "ch_Z9y8X7w6V5u4T3s2", name: "On-call room" } }), certificateId: null });

const notDeployedOnMany = () =>
  eventOf("certificate.not_deployed", {
    certificate: certificateView({ status: "valid", statusReason: null }),
    deployment: { issuedAt: "2026-05-01T00:00:00.000Z" },
    lagging: Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(1000, "l")),
  });

describe("teams", () => {
  test("the card is of version 1.4 at most, as the contract promises", () => {
    const version = teams(eventOf("certificate.invalid", { certificate: certificateView() })).attachments[0]!.content.version;
    expect(version).toBe("1.4");
  });

  test("the headline's colour: red (Attention) for an expired certificate, amber for expiring, green for renewed", () => {
    const colour = (type: "certificate.expired" | "certificate.expiring" | "certificate.renewed") =>
      teams(eventOf(type, { certificate: certificateView({ status: "valid", statusReason: null }) })).attachments[0]!.content.body[0]!.color;
    expect(colour("certificate.expired")).toBe("Attention");
    expect(colour("certificate.expiring")).toBe("Warning");
    expect(colour("certificate.renewed")).toBe("Good");
  });

  test("a test notification's card names the channel (a FactSet of one fact)", () => {
    const body = teams(testEvent()).attachments[0]!.content.body;
    const factSet = body.find((b) => b.type === "FactSet");
    expect(factSet?.facts).toEqual([{ title: "Channel", value: "On-call room" }]);
  });

  test("markdown in the summary (a CA's name) is escaped; a numbered list marker in a fact too", () => {
    const event = eventOf("certificate.renewal_blocked", {
      certificate: certificateView({ status: "valid", statusReason: null, issuer: "*Evil* [CA](https://evil.example)" }),
      caa: { name: "example.com", setAt: "example.com", property: "issue", records: [] },
    });
    const [, summary] = teams(event).attachments[0]!.content.body;
    expect(summary!.text).toContain("\\*Evil\\* \\[CA\\](https://evil.example)");
    expect(summary!.text).not.toContain("*Evil* [CA]");

    const listed = teams(eventOf("certificate.invalid", { certificate: certificateView({ issuer: "1. first item" }) })).attachments[0]!.content.body;
    const issuer = listed.find((b) => b.type === "FactSet")!.facts!.find((f) => f.title === "Issuer")!;
    // Not a list: the marker escaped as CommonMark escapes it (a backslash before the digit would show).
    expect(issuer.value).toBe("1\\. first item");
  });

  test("a TextBlock holds at most 2,000 characters, the cut marked", () => {
    const [, summary] = teams(notDeployedOnMany()).attachments[0]!.content.body;
    expect(summary!.text!.length).toBeLessThanOrEqual(2000);
    expect(summary!.text!.endsWith("…")).toBe(true);
  });
});

describe("telegram", () => {
  test("chat_id is sent as configured: a number stays a number, @channel a string", () => {
    expect(telegram(testEvent(), -1001234567890).chat_id).toBe(-1001234567890);
    expect(telegram(testEvent(), "@certs").chat_id).toBe("@certs");
  });

  test("a test message names the channel and ends with the event id", () => {
    const { text } = telegram(testEvent());
    expect(text).toContain("\nChannel: On-call room\n");
    expect(text.endsWith("\n\ncertkeeper · evt_a1B2c3D4e5F6g7H8")).toBe(true);
  });

  test("the text is at most 4,096 characters, the cut marked", () => {
    const { text } = telegram(notDeployedOnMany());
    expect(text.length).toBeLessThanOrEqual(4096);
    expect(text.length).toBeGreaterThan(4000);
    expect(text.endsWith("…")).toBe(true);
  });
});

describe("pagerduty", () => {
  test("a source of exactly 255 characters (PagerDuty's limit) is sent whole, not cut", () => {
    const domain = "a".repeat(249);
    const event = eventOf("certificate.invalid", { certificate: certificateView({ domain, name: domain, port: 18443 }) });
    const body = JSON.parse(request(event, channelOf("pagerduty", { routingKey: "R".repeat(32) })).body) as { payload: { source: string } };
    expect(body.payload.source).toBe(`${domain}:18443`);
  });
});

describe("webhook", () => {
  const webhook = (config: Record<string, unknown>): ChannelRecord => ({ ...channelOf("webhook", config), signingSecret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });

  test("a channel whose url is empty is refused with a clear message, not sent to an empty address", () => {
    expect(() => renderNotification(eventOf("certificate.invalid", { certificate: certificateView() }), webhook({ url: "" }), OPTIONS)).toThrow(/config\.url/);
  });

  test("a signing secret without its whsec_ prefix signs as with it (as the specification's libraries accept)", () => {
    const input = { id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestamp: 1614265330, body: '{"test": 2432232314}' };
    const bare = signWebhook({ ...input, secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" });
    expect(bare).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  test("an empty signing secret is refused rather than signing with an empty key", () => {
    expect(() => signWebhook({ secret: "whsec_", id: "evt_1", timestamp: 1, body: "{}" })).toThrow(/empty/);
  });
});

describe("pagerduty events", () => {
  const pd = channelOf("pagerduty", { routingKey: "R".repeat(32) });
  const body = (event: EventRecord): Record<string, any> => {
    const r = request(event, pd);
    return { url: r.url, ...(JSON.parse(r.body) as Record<string, any>) };
  };

  test("a trigger names the host as component and host:port as source, says who sent it, and carries the facts", () => {
    const b = body(eventOf("certificate.invalid", { certificate: certificateView({ port: 8443 }) }));
    expect(b.event_action).toBe("trigger");
    expect(b.client).toBe("certkeeper");
    expect(b.payload.source).toBe("example.com:8443");
    expect(b.payload.component).toBe("example.com");
    expect(b.payload.custom_details).toMatchObject({ event_type: "certificate.invalid", Issuer: "Evil CA", "Serial number": "01", Domain: "example.com:8443" });
  });

  test("a source longer than PagerDuty's 255 characters (a 253-character name on port 65535) is cut to 255", () => {
    const label = "a".repeat(63);
    const domain = `${label}.${label}.${label}.${"b".repeat(61)}`;
    expect(domain.length).toBe(253);
    const b = body(eventOf("certificate.invalid", { certificate: certificateView({ domain, name: domain, port: 65535 }) }));
    expect(b.payload.source.length).toBeLessThanOrEqual(255);
    expect(b.payload.source.startsWith(domain.slice(0, 200))).toBe(true);
  });

  test("an event whose certificate is gone (certificateId null) opens no incident keyed on null: it is a change event", () => {
    const event: EventRecord = { ...eventOf("certificate.expiring", { certificate: certificateView({ status: "expiring", statusReason: null }) }), certificateId: null };
    const b = body(event);
    expect(b.url).toBe("https://events.pagerduty.com/v2/change/enqueue");
    expect(JSON.stringify(b)).not.toContain("null:");
  });

  test("a newly issued certificate's change event names its domain as source and carries the event's time", () => {
    const event: EventRecord = {
      ...eventOf("certificate.issued", { domain: "watched.example", dnsNames: ["watched.example"], issuer: "Example CA", authorizedIssuer: true }),
      certificateId: null,
    };
    const b = body(event);
    expect(b.url).toBe("https://events.pagerduty.com/v2/change/enqueue");
    expect(b.payload.source).toBe("watched.example");
    expect(b.payload.timestamp).toBe("2026-05-05T09:00:00.000Z");
  });
});
