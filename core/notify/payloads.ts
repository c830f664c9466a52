/**
 * What one event becomes for one channel: HTTP POSTs (webhook, Discord, Slack, Teams, PagerDuty,
 * Telegram) or an email. Pure:
 * the same event, channel and options always render the same bytes, so a retry sends what the first
 * attempt sent (bar the webhook timestamp and signature, which Standard Webhooks wants fresh).
 */
import type { ChannelRecord, EventRecord } from "../base/records.ts";
import type { EmailMessage, OutgoingHttpRequest } from "./ports.ts";
import { describeEvent } from "./_describe.ts";
import { discordPayload, slackPayload } from "./chat_payloads.ts";
import { pagerdutyRequests, type PagerDutyProblem } from "./pagerduty_payload.ts";
import { teamsPayload } from "./teams_payload.ts";
import { telegramPayload } from "./telegram_payload.ts";
import { emailMessage } from "./email_message.ts";
import { signWebhook } from "./webhook_signature.ts";

/**
 * An email, or HTTP requests sent in order (one, but a PagerDuty resolve sends one per problem it
 * ends); the notification is delivered once every request was accepted.
 */
export type Notification =
  | { kind: "http"; request: OutgoingHttpRequest; followUps?: OutgoingHttpRequest[] }
  | { kind: "email"; message: EmailMessage };

export interface RenderOptions {
  /** ms since the epoch; the webhook timestamp. */
  now: number;
  /** CERTKEEPER_MAIL_FROM. */
  mailFrom: string;
  /** CERTKEEPER_PAGERDUTY_URL; default https://events.pagerduty.com. */
  pagerdutyUrl?: string;
  /** CERTKEEPER_TELEGRAM_URL; default https://api.telegram.org. */
  telegramUrl?: string;
  /** PagerDuty problems a resolve leaves open (a later event of the certificate opened them again). */
  keepOpen?: readonly PagerDutyProblem[];
}

/** Header names the webhook sets itself; a channel header of the same name (any case) is dropped. */
const OWN_HEADERS = new Set(["content-type", "webhook-id", "webhook-timestamp", "webhook-signature"]);

/**
 * Renders `event` for `channel`. Throws when the channel's config lacks what its type needs (the
 * channels API refuses such configs, so this only happens to a record edited behind its back).
 *
 * @example
 * const n = renderNotification(event, channel, { now: Date.now(), mailFrom: config.mailFrom });
 * if (n.kind === "http") await transports.http.post(n.request, { timeoutMs: 10_000 });
 * else await transports.email.send(n.message);
 */
export function renderNotification(event: EventRecord, channel: ChannelRecord, options: RenderOptions): Notification {
  switch (channel.type) {
    case "webhook":
      return { kind: "http", request: webhookRequest(event, channel, options.now) };
    case "discord":
      return chatRequest(channel, discordPayload(event, describeEvent(event)));
    case "slack":
      return chatRequest(channel, slackPayload(event, describeEvent(event)));
    case "email": {
      const to = requireString(channel, "email");
      return { kind: "email", message: emailMessage(event, channel, { described: describeEvent(event), to, mailFrom: options.mailFrom }) };
    }
    case "teams":
      return chatRequest(channel, teamsPayload(event, describeEvent(event)));
    case "pagerduty": {
      const routingKey = requireString(channel, "routingKey");
      const baseUrl = options.pagerdutyUrl ?? "https://events.pagerduty.com";
      const [request, ...followUps] = pagerdutyRequests(event, describeEvent(event), { baseUrl, routingKey, keepOpen: options.keepOpen });
      return { kind: "http", request: request!, followUps };
    }
    case "telegram": {
      const token = requireString(channel, "botToken");
      const chatId = channel.config.chatId;
      if (typeof chatId !== "number" && typeof chatId !== "string") throw new Error(`telegram channel "${channel.id}" has no config.chatId`);
      const baseUrl = options.telegramUrl ?? "https://api.telegram.org";
      const body = JSON.stringify(telegramPayload(event, describeEvent(event), chatId));
      return {
        kind: "http",
        request: { url: `${baseUrl}/bot${token}/sendMessage`, headers: { "content-type": "application/json" }, body, operator: true },
      };
    }
  }
}

/** The webhook body, exactly `{ id, type, createdAt, data }`. */
export function webhookBody(event: EventRecord): string {
  return JSON.stringify({ id: event.id, type: event.type, createdAt: new Date(event.createdAt).toISOString(), data: event.data });
}

function webhookRequest(event: EventRecord, channel: ChannelRecord, now: number): OutgoingHttpRequest {
  const url = requireString(channel, "url");
  if (!channel.signingSecret) throw new Error(`Webhook channel "${channel.id}" has no signing secret`);
  const body = webhookBody(event);
  const timestamp = Math.floor(now / 1000);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const extra = channel.config.headers;
  if (typeof extra === "object" && extra !== null) {
    for (const [name, value] of Object.entries(extra)) {
      if (typeof value === "string" && !OWN_HEADERS.has(name.toLowerCase())) headers[name] = value;
    }
  }
  headers["webhook-id"] = event.id;
  headers["webhook-timestamp"] = String(timestamp);
  headers["webhook-signature"] = signWebhook({ secret: channel.signingSecret, id: event.id, timestamp, body });
  return { url, headers, body };
}

function chatRequest(channel: ChannelRecord, payload: Record<string, unknown>): Notification {
  const url = requireString(channel, "webhookUrl");
  return { kind: "http", request: { url, headers: { "content-type": "application/json" }, body: JSON.stringify(payload) } };
}

function requireString(channel: ChannelRecord, field: string): string {
  const value = channel.config[field];
  if (typeof value !== "string" || value === "") {
    throw new Error(`${channel.type} channel "${channel.id}" has no config.${field}`);
  }
  return value;
}
