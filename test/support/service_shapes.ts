/**
 * The documented wire formats of the services certkeeper pages and posts to, as checks a local
 * receiver runs on every request it gets: each returns the problems found (none: the request is
 * what the service accepts).
 *
 * - PagerDuty Events API v2 (developer.pagerduty.com, "Send an Alert Event", "Send a Change Event"):
 *   routing_key 32 characters; event_action trigger | acknowledge | resolve; dedup_key at most 255;
 *   a trigger's payload needs summary (at most 1024), source, severity (critical | error | warning |
 *   info); timestamp ISO 8601; custom_details an object. A change event needs payload.summary (at most
 *   1024); source and timestamp optional.
 * - Microsoft Teams workflow webhook: { type: "message", attachments: [{ contentType:
 *   "application/vnd.microsoft.card.adaptive", content: AdaptiveCard }] }, the card of version 1.4 or
 *   lower with a body of elements.
 * - Telegram Bot API sendMessage: chat_id an integer or a string, text 1–4096 characters; no other
 *   field than those sent on purpose.
 */

type Problems = string[];

const SEVERITIES = ["critical", "error", "warning", "info"];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const isObject = (value: unknown): value is Record<string, any> => typeof value === "object" && value !== null && !Array.isArray(value);

export function pagerdutyAlertProblems(body: unknown): Problems {
  const problems: Problems = [];
  if (!isObject(body)) return ["the body is not a JSON object"];
  const allowed = ["routing_key", "event_action", "dedup_key", "payload", "client", "client_url", "links", "images"];
  for (const key of Object.keys(body)) if (!allowed.includes(key)) problems.push(`unknown field ${key}`);
  if (typeof body.routing_key !== "string" || body.routing_key.length !== 32) problems.push("routing_key must be 32 characters");
  if (!["trigger", "acknowledge", "resolve"].includes(body.event_action)) problems.push("event_action must be trigger, acknowledge or resolve");
  if (body.dedup_key !== undefined && (typeof body.dedup_key !== "string" || body.dedup_key.length > 255)) problems.push("dedup_key must be a string of at most 255");
  if (body.event_action !== "trigger" && typeof body.dedup_key !== "string") problems.push("acknowledge and resolve need a dedup_key");
  if (body.event_action === "trigger") {
    const p = body.payload;
    if (!isObject(p)) problems.push("a trigger needs a payload object");
    else {
      const payloadAllowed = ["summary", "source", "severity", "timestamp", "component", "group", "class", "custom_details"];
      for (const key of Object.keys(p)) if (!payloadAllowed.includes(key)) problems.push(`unknown payload field ${key}`);
      if (typeof p.summary !== "string" || p.summary.length === 0 || p.summary.length > 1024) problems.push("payload.summary must be 1–1024 characters");
      if (typeof p.source !== "string" || p.source.length === 0) problems.push("payload.source is required");
      if (!SEVERITIES.includes(p.severity)) problems.push("payload.severity must be critical, error, warning or info");
      if (p.timestamp !== undefined && !(typeof p.timestamp === "string" && ISO.test(p.timestamp))) problems.push("payload.timestamp must be ISO 8601");
      for (const key of ["component", "group", "class"]) if (p[key] !== undefined && typeof p[key] !== "string") problems.push(`payload.${key} must be a string`);
      if (p.custom_details !== undefined && !isObject(p.custom_details)) problems.push("payload.custom_details must be an object");
    }
  }
  if (body.client !== undefined && typeof body.client !== "string") problems.push("client must be a string");
  return problems;
}

export function pagerdutyChangeProblems(body: unknown): Problems {
  const problems: Problems = [];
  if (!isObject(body)) return ["the body is not a JSON object"];
  for (const key of Object.keys(body)) if (!["routing_key", "payload", "links"].includes(key)) problems.push(`unknown field ${key}`);
  if (typeof body.routing_key !== "string" || body.routing_key.length !== 32) problems.push("routing_key must be 32 characters");
  const p = body.payload;
  if (!isObject(p)) return [...problems, "payload is required"];
  for (const key of Object.keys(p)) if (!["summary", "source", "timestamp", "custom_details"].includes(key)) problems.push(`unknown payload field ${key}`);
  if (typeof p.summary !== "string" || p.summary.length === 0 || p.summary.length > 1024) problems.push("payload.summary must be 1–1024 characters");
  if (p.source !== undefined && typeof p.source !== "string") problems.push("payload.source must be a string");
  if (p.timestamp !== undefined && !(typeof p.timestamp === "string" && ISO.test(p.timestamp))) problems.push("payload.timestamp must be ISO 8601");
  if (p.custom_details !== undefined && !isObject(p.custom_details)) problems.push("payload.custom_details must be an object");
  return problems;
}

export function teamsMessageProblems(body: unknown): Problems {
  const problems: Problems = [];
  if (!isObject(body)) return ["the body is not a JSON object"];
  if (body.type !== "message") problems.push('type must be "message"');
  if (!Array.isArray(body.attachments) || body.attachments.length !== 1) return [...problems, "attachments must hold one card"];
  const attachment = body.attachments[0];
  if (attachment.contentType !== "application/vnd.microsoft.card.adaptive") problems.push("contentType must be application/vnd.microsoft.card.adaptive");
  const card = attachment.content;
  if (!isObject(card)) return [...problems, "content must be an Adaptive Card object"];
  if (card.type !== "AdaptiveCard") problems.push('content.type must be "AdaptiveCard"');
  const version = /^1\.(\d)$/.exec(String(card.version));
  if (!version || Number(version[1]) > 4) problems.push("the card's version must be 1.4 or lower");
  if (!Array.isArray(card.body) || card.body.length === 0) return [...problems, "the card needs a body"];
  for (const element of card.body) {
    if (!["TextBlock", "FactSet", "ColumnSet", "Container", "Image"].includes(element.type)) problems.push(`unknown element ${element.type}`);
    if (element.type === "TextBlock" && typeof element.text !== "string") problems.push("a TextBlock needs text");
    if (element.type === "FactSet") {
      for (const fact of element.facts ?? []) if (typeof fact.title !== "string" || typeof fact.value !== "string") problems.push("facts need a title and a value");
    }
  }
  return problems;
}

export function telegramSendMessageProblems(body: unknown): Problems {
  const problems: Problems = [];
  if (!isObject(body)) return ["the body is not a JSON object"];
  for (const key of Object.keys(body)) if (!["chat_id", "text"].includes(key)) problems.push(`unexpected field ${key}`);
  const chat = body.chat_id;
  if (!(Number.isInteger(chat) || (typeof chat === "string" && chat.length > 0))) problems.push("chat_id must be an integer or a string");
  if (typeof body.text !== "string" || body.text.length === 0 || body.text.length > 4096) problems.push("text must be 1–4096 characters");
  return problems;
}

/** Text of every TextBlock and fact of a Teams card, joined: what a reader of the card sees. */
export function teamsCardText(body: any): string {
  const card = body.attachments[0].content;
  return card.body
    .flatMap((element: any) => (element.type === "FactSet" ? element.facts.map((f: any) => `${f.title}: ${f.value}`) : [element.text]))
    .join("\n");
}
