/**
 * Form fields to the API's request bodies. Only the shape changes here (text to numbers and lists);
 * every rule is the operation's, so a wrong value is refused with the API's own message. A field left
 * empty is "not given", except where the form says otherwise.
 */
import { CertkeeperError, EVENT_TYPES, HOUR, DAY, type ChannelType } from "../../core/base/mod.ts";

/** A form as read: each field's first value. */
type Form = Record<string, string>;

/** "a, b c" → ["a", "b", "c"]: commas or spaces between items. */
export function listField(text: string | undefined): string[] {
  return (text ?? "")
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter((item) => item !== "");
}

/** Digits become numbers; anything else goes as typed, for the API to name. */
function numberOrText(text: string): number | string {
  return /^-?\d{1,6}$/.test(text) ? Number(text) : text;
}

/** How long a mute lasts, by the form's choice. */
export const MUTE_CHOICES: ReadonlyArray<[string, string, number | null]> = [
  ["", "Leave as it is", null],
  ["off", "Not muted", null],
  ["1h", "Muted for 1 hour", HOUR],
  ["1d", "Muted for 1 day", DAY],
  ["7d", "Muted for 7 days", 7 * DAY],
  ["30d", "Muted for 30 days", 30 * DAY],
];

/** The mute choice as `mutedUntil`: a time, null (unmute) or undefined (leave it). */
export function mutedUntilField(choice: string | undefined, now = Date.now()): string | null | undefined {
  if (!choice) return undefined;
  if (choice === "off") return null;
  const found = MUTE_CHOICES.find(([value]) => value === choice);
  if (!found || found[2] === null) return choice; // the API names an unreadable value
  return new Date(now + found[2]).toISOString();
}

/** POST /v1/certificates' body from the dashboard's form. */
export function addCertificateBody(form: Form): Record<string, unknown> {
  const body: Record<string, unknown> = { domain: (form.domain ?? "").trim() };
  const port = form.port?.trim();
  if (port) body.port = numberOrText(port);
  if (form.name?.trim()) body.name = form.name.trim();
  if (form.tags?.trim()) body.tags = listField(form.tags);
  if (form.protocol?.trim() && form.protocol !== "tls") body.protocol = form.protocol.trim();
  if (form.connectTo?.trim()) body.connectTo = form.connectTo.trim();
  if (form.alertThresholds?.trim()) body.alertThresholds = listField(form.alertThresholds).map(numberOrText);
  if (form.alertPolicy?.trim()) body.alertPolicy = form.alertPolicy.trim();
  return body;
}

/** PATCH /v1/certificates/{id}'s body from a certificate's edit form: every field it shows. */
export function patchCertificateBody(form: Form, options: { alertPolicy: boolean }): Record<string, unknown> {
  const body: Record<string, unknown> = {
    name: (form.name ?? "").trim(),
    // Empty: no alerts by days left (the API's empty list).
    alertThresholds: listField(form.alertThresholds).map(numberOrText),
    tags: listField(form.tags),
    connectTo: form.connectTo?.trim() ? form.connectTo.trim() : null,
  };
  if (options.alertPolicy && form.alertPolicy?.trim()) body.alertPolicy = form.alertPolicy.trim();
  // Only what the form changed from what it showed (its `was.` fields): a form opened before someone
  // else's save does not put back what they changed in the fields left alone.
  for (const field of Object.keys(body)) {
    const was = form[`was.${field}`];
    if (was !== undefined && sameField(field, was, form[field] ?? "")) delete body[field];
  }
  const mutedUntil = mutedUntilField(form.mute);
  if (mutedUntil !== undefined) body.mutedUntil = mutedUntil;
  return body;
}

/** Whether two spellings of a certificate form's field say the same (lists item by item). */
function sameField(field: string, a: string, b: string): boolean {
  if (field === "alertThresholds" || field === "tags") return listField(a).join(",") === listField(b).join(",");
  return a.trim() === b.trim();
}

/** The config fields each channel type's form shows: name, label, input type, whether it is a secret. */
export const CHANNEL_FIELDS: Record<ChannelType, Array<{ name: string; label: string; type: "email" | "url" | "text" | "textarea"; secret?: boolean; hint?: string }>> = {
  email: [{ name: "email", label: "Email address", type: "email" }],
  slack: [{ name: "webhookUrl", label: "Incoming webhook URL", type: "url", secret: true, hint: "https://hooks.slack.com/services/…; Mattermost and Rocket.Chat incoming webhooks work too." }],
  discord: [{ name: "webhookUrl", label: "Webhook URL", type: "url", secret: true, hint: "https://discord.com/api/webhooks/…" }],
  teams: [{ name: "webhookUrl", label: "Workflow webhook URL", type: "url", secret: true, hint: "The URL of a Teams workflow that posts a card to a channel." }],
  webhook: [
    { name: "url", label: "URL", type: "url", hint: "http or https; every delivery is signed (Standard Webhooks)." },
    { name: "headers", label: "Headers (optional)", type: "textarea", secret: true, hint: "One per line, as Name: value. Values are shown as ******** once saved; leave them so to keep them." },
  ],
  pagerduty: [{ name: "routingKey", label: "Integration key (Events API v2)", type: "text", secret: true, hint: "32 characters, from the service's Events API v2 integration." }],
  telegram: [
    { name: "botToken", label: "Bot token", type: "text", secret: true, hint: "From BotFather: 123456789:AA…" },
    { name: "chatId", label: "Chat id", type: "text", hint: "A number (-100… for a group or channel), or @channelname." },
  ],
};

/** The channel types in the order the console offers them, with their names for people. */
export const CHANNEL_TYPE_NAMES: Array<[ChannelType, string]> = [
  ["email", "Email"],
  ["slack", "Slack (or Mattermost, Rocket.Chat)"],
  ["discord", "Discord"],
  ["teams", "Microsoft Teams"],
  ["telegram", "Telegram"],
  ["pagerduty", "PagerDuty"],
  ["webhook", "Webhook"],
];

/** The event kinds a channel's filter can name (every kind but the test, which ignores filters). */
export const FILTER_EVENTS = EVENT_TYPES.filter((type) => type !== "test");

/** A channel's config from its form: the type's fields, the webhook's headers as "Name: value" lines. */
export function channelConfig(type: ChannelType, form: Form): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  // An unknown type has no fields: the API refuses the type before looking at the config.
  for (const field of Object.hasOwn(CHANNEL_FIELDS, type) ? CHANNEL_FIELDS[type] : []) {
    const value = (form[`config.${field.name}`] ?? "").trim();
    if (field.name === "headers") {
      if (value !== "") config.headers = headersField(value);
    } else if (field.name === "chatId") {
      config.chatId = /^-?\d{1,20}$/.test(value) && Number.isSafeInteger(Number(value)) ? Number(value) : value;
    } else if (value !== "") {
      config[field.name] = value;
    }
  }
  return config;
}

/** "Name: value" lines as a header map; a line without a colon is refused as the API refuses a bad header. */
export function headersField(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    const colon = line.indexOf(":");
    // Named by its number only: the line may hold a secret (a key typed without its name).
    if (colon <= 0) throw new CertkeeperError("invalid_config", `Header line ${index + 1} is not written as Name: value.`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The webhook's headers as the form shows them: "Name: value" lines (values as the API shows them, masked). */
export function headersText(headers: unknown): string {
  if (!headers || typeof headers !== "object") return "";
  return Object.entries(headers as Record<string, string>)
    .map(([name, value]) => `${name}: ${value}`)
    .join("\n");
}

/** A channel's filter from its form: the kinds ticked (`filter.event.<kind>`) and the tags listed; none of either: every event. */
export function channelFilter(form: Form): Record<string, unknown> | null {
  const events = FILTER_EVENTS.filter((kind) => form[`filter.event.${kind}`] === "1");
  const tags = listField(form["filter.tags"]);
  if (events.length === 0 && tags.length === 0) return null;
  return { ...(events.length > 0 ? { events } : {}), ...(tags.length > 0 ? { tags } : {}) };
}

/** POST /v1/watches' body (or PATCH's, without the domain) from a watch's form. */
export function watchBody(form: Form, options: { withDomain: boolean }): Record<string, unknown> {
  return {
    ...(options.withDomain ? { domain: (form.domain ?? "").trim() } : {}),
    includeSubdomains: form.includeSubdomains === "1",
    autoMonitor: form.autoMonitor === "1",
    // One issuer per line, not per comma: names such as "GoDaddy.com, Inc." hold one.
    allowedIssuers: (form.allowedIssuers ?? "")
      .split(/\r?\n/)
      .map((issuer) => issuer.trim())
      .filter((issuer) => issuer !== ""),
  };
}
