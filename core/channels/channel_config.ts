/**
 * Channel types and their configs (CONTRACT §6): validation in the contract's order and codes, and
 * the masking of credentials whenever a channel is shown after creation.
 */
import { CertkeeperError, quote } from "../base/errors.ts";
import { CHANNEL_TYPES, type ChannelType } from "../base/records.ts";
import { isIP } from "node:net";
import { refusedAddressReason } from "../net/address_policy.ts";
import { NetFailure, resolveVetted, type ResolverOptions } from "../net/resolver.ts";
import { isEmailAddress } from "../net/mod.ts";
import { refuseNul } from "../schemas/validate.ts";

export { CHANNEL_TYPES };
/** SPEC.md's spelling of the chat-service type, accepted on input and stored as discord. */
export const SPEC_CHAT_TYPE = "the service";

export const MASK = "********";
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** CONTRACT §6's list, and the hop-by-hop headers an HTTP client refuses to send. */
const FORBIDDEN_HEADERS = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "expect",
  "te",
  "trailer",
  "proxy-connection",
]);
const MAX_HEADERS = 20;
const MAX_URL_LENGTH = 2048;

const CONFIG_FIELDS: Record<ChannelType, string[]> = {
  email: ["email"],
  discord: ["webhookUrl"],
  slack: ["webhookUrl"],
  webhook: ["url", "headers"],
  pagerduty: ["routingKey"],
  teams: ["webhookUrl"],
  telegram: ["botToken", "chatId"],
};

/** A PagerDuty integration (routing) key: 32 characters (CONTRACT §16), printable, no spaces. */
const ROUTING_KEY = /^[\x21-\x7e]{32}$/;
/** A Telegram bot token as BotFather issues it: the bot's id, a colon, a secret. */
const BOT_TOKEN = /^\d{1,20}:[A-Za-z0-9_-]{20,100}$/;
/** A Telegram chat: a numeric id (groups and channels are negative) or a public @username. */
const CHAT_ID_TEXT = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;

/** The stored type for an input type, or throws invalid_channel_type. Type names are case-sensitive. */
export function parseChannelType(type: unknown): ChannelType {
  if (type === SPEC_CHAT_TYPE) return "discord";
  if (typeof type === "string" && (CHANNEL_TYPES as readonly string[]).includes(type)) return type as ChannelType;
  throw new CertkeeperError(
    "invalid_channel_type",
    `${type === undefined ? "Field \"type\" is required" : `Channel type ${quote(type)} does not exist`}: use one of ${CHANNEL_TYPES.join(", ")}.`,
  );
}

export interface ConfigCheckOptions {
  allowPrivateTargets: boolean;
  /** The stored config when patching: masked values sent back keep what is stored. */
  previous?: Record<string, unknown>;
}

/** Validates `config` for `type`: returns the config to store, or throws invalid_config / invalid_webhook_url. */
export function parseChannelConfig(type: ChannelType, config: unknown, options: ConfigCheckOptions): Record<string, unknown> {
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw invalidConfig(`Field "config" must be an object: ${exampleConfig(type)}.`);
  }
  refuseNul(config, { code: "invalid_config", field: "config" });
  const fields = config as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!CONFIG_FIELDS[type].includes(key)) {
      throw invalidConfig(`Unknown field "config.${key}" for a ${type} channel: the allowed fields are ${CONFIG_FIELDS[type].join(", ")}.`);
    }
  }
  switch (type) {
    case "email": {
      const email = fields.email;
      if (typeof email !== "string" || !isEmailAddress(email.trim())) {
        throw invalidConfig(`An email channel needs "config.email", an email address${email === undefined ? "" : `; got ${quote(email)}`}.`);
      }
      return { email: email.trim() };
    }
    case "discord":
    case "slack":
    case "teams": {
      const previous = options.previous?.webhookUrl;
      if (typeof previous === "string" && fields.webhookUrl === maskChatUrl(previous)) return { webhookUrl: previous };
      return { webhookUrl: checkUrl(fields.webhookUrl, "config.webhookUrl", ["https:"], options) };
    }
    case "webhook": {
      const url = checkUrl(fields.url, "config.url", ["http:", "https:"], options);
      // A masked value sent back keeps its stored secret only while it goes where it went before:
      // otherwise anyone who may edit the channel could send the owner's secret to a host of theirs.
      const previousUrl = options.previous?.url;
      const sameOrigin = typeof previousUrl === "string" && new URL(previousUrl).origin === new URL(url).origin;
      const headers = checkHeaders(fields.headers, sameOrigin ? (options.previous?.headers as Record<string, string> | undefined) : undefined);
      return headers ? { url, headers } : { url };
    }
    case "pagerduty": {
      const routingKey = keepMasked(fields.routingKey, options.previous?.routingKey);
      if (typeof routingKey !== "string" || !ROUTING_KEY.test(routingKey)) {
        throw invalidConfig(
          `A pagerduty channel needs "config.routingKey", the 32-character integration key of an Events API v2 integration${routingKey === undefined ? "" : "; got a value that is not one"}.`,
        );
      }
      return { routingKey };
    }
    case "telegram": {
      const botToken = keepMasked(fields.botToken, options.previous?.botToken);
      if (typeof botToken !== "string" || !BOT_TOKEN.test(botToken)) {
        throw invalidConfig(
          `A telegram channel needs "config.botToken", the token BotFather gave the bot (such as 123456789:AAE…)${botToken === undefined ? "" : "; got a value that is not one"}.`,
        );
      }
      const chatId = fields.chatId;
      const validChat =
        (typeof chatId === "number" && Number.isSafeInteger(chatId)) || (typeof chatId === "string" && CHAT_ID_TEXT.test(chatId));
      if (!validChat) {
        throw invalidConfig(
          `A telegram channel needs "config.chatId", a chat id (a whole number) or a public channel's @username${chatId === undefined ? "" : `; got ${quote(chatId)}`}.`,
        );
      }
      return { botToken, chatId };
    }
  }
}

/** A masked credential sent back in a PATCH stands for the stored one. */
function keepMasked(value: unknown, previous: unknown): unknown {
  return value === MASK && typeof previous === "string" ? previous : value;
}

function checkUrl(value: unknown, field: string, schemes: string[], options: ConfigCheckOptions): string {
  if (value === undefined || value === null) throw invalidConfig(`Field ${quote(field)} is required.`);
  const invalidUrl = (why: string) =>
    new CertkeeperError("invalid_webhook_url", `Field ${quote(field)} ${why}.`);
  if (typeof value !== "string") throw invalidUrl(`must be a URL string; got ${quote(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalidUrl(`is not a valid URL; got ${quote(value)}`);
  }
  if (!schemes.includes(url.protocol)) {
    throw invalidUrl(`must be an ${schemes.map((s) => s.slice(0, -1)).join(" or ")} URL; got ${quote(url.protocol.slice(0, -1))}`);
  }
  if (url.username || url.password) throw invalidUrl("must not carry a user name or password: use config.headers for credentials");
  if (value.length > MAX_URL_LENGTH) throw invalidUrl(`must be at most ${MAX_URL_LENGTH} characters`);
  if (!options.allowPrivateTargets) {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const reason = isIP(host) ? refusedAddressReason(host) : /(^|\.)localhost\.?$/i.test(host) ? "a loopback address" : null;
    if (reason) throw invalidUrl(`points at ${reason}, which certkeeper does not deliver to`);
  }
  return value;
}

function checkHeaders(value: unknown, previous: Record<string, string> | undefined): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw invalidConfig('Field "config.headers" must be an object of header names to string values.');
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_HEADERS) throw invalidConfig(`Field "config.headers" may hold at most ${MAX_HEADERS} headers.`);
  const headers: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (const [name, raw] of entries) {
    const lower = name.toLowerCase();
    if (!HEADER_NAME.test(name) || name.length > 100) throw invalidConfig(`Header name ${quote(name)} is not a valid HTTP header name.`);
    if (FORBIDDEN_HEADERS.has(lower) || lower.startsWith("webhook-")) {
      throw invalidConfig(`Header ${quote(name)} is set by certkeeper or the connection itself and cannot be configured.`);
    }
    if (seen.has(lower)) throw invalidConfig(`Header ${quote(name)} is given twice (names are compared case-insensitively).`);
    seen.add(lower);
    let headerValue = raw;
    if (raw === MASK) {
      headerValue = previous && Object.entries(previous).find(([prior]) => prior.toLowerCase() === lower)?.[1];
      if (headerValue === undefined) {
        throw invalidConfig(`Header ${quote(name)} is masked: send its value again (it is kept only while the URL's origin, its scheme, host and port, stays the same).`);
      }
    }
    // What HTTP can carry (RFC 9110 field-value: visible ASCII, space, tab, and bytes 0x80-0xFF);
    // anything else would make every delivery of this channel fail.
    if (typeof headerValue !== "string" || !/^[\t\x20-\x7e\x80-\xff]*$/.test(headerValue) || headerValue.length > 4096) {
      throw invalidConfig(`Header ${quote(name)} must have a string value of printable characters without line breaks.`);
    }
    headers.push([name, headerValue]);
  }
  // fromEntries defines each name as its own property, even "__proto__".
  return Object.fromEntries(headers);
}

/**
 * Refuses a URL whose host resolves (CERTKEEPER_RESOLVE, then DNS) to a refused address. A name that
 * does not resolve now is accepted: DNS may be down; delivery re-checks at connect time anyway.
 */
export async function checkTargetResolves(type: ChannelType, config: Record<string, unknown>, options: ResolverOptions): Promise<void> {
  // PagerDuty's and Telegram's base URLs are the operator's (like the SMTP server): not the caller's to choose.
  if (options.allowPrivateTargets || type === "email" || type === "pagerduty" || type === "telegram") return;
  const field = type === "webhook" ? "url" : "webhookUrl";
  const host = new URL(String(config[field])).hostname.replace(/^\[|\]$/g, "");
  try {
    await resolveVetted(host, options);
  } catch (error) {
    if (error instanceof NetFailure && error.reason === "connection_refused") {
      throw new CertkeeperError("invalid_webhook_url", `Field "config.${field}" points at a refused address: ${error.message}.`);
    }
  }
}

/** A chat webhook URL with its secret parts (last path segment, query) replaced by the mask. */
export function maskChatUrl(value: string): string {
  try {
    const url = new URL(value);
    const segments = url.pathname.split("/");
    for (const at of secretSegments(segments)) segments[at] = MASK;
    return `${url.origin}${segments.join("/")}${url.search ? `?${MASK}` : ""}`;
  } catch {
    return MASK;
  }
}

/**
 * Endings a chat service appends after the token to take another service's format (Discord's
 * `/webhooks/{id}/{token}/slack` and `/github`): not secret themselves, and the token is before them.
 */
const FORMAT_SUFFIXES = new Set(["slack", "github"]);

/**
 * Where the token is among a webhook URL path's segments: the last one that has anything in it (a
 * trailing slash must not leave the token showing), and the one before it when the last only names a
 * format.
 */
function secretSegments(segments: string[]): number[] {
  const last = segments.findLastIndex((segment) => segment !== "");
  if (last <= 0) return [];
  if (!FORMAT_SUFFIXES.has(segments[last]!.toLowerCase())) return [last];
  const before = segments.findLastIndex((segment, at) => at < last && segment !== "");
  return before > 0 ? [before, last] : [last];
}

/** The config as shown after creation: header values and chat webhook secrets masked. */
export function maskConfig(type: ChannelType, config: Record<string, unknown>): Record<string, unknown> {
  switch (type) {
    case "discord":
    case "slack":
    case "teams":
      return { webhookUrl: maskChatUrl(String(config.webhookUrl)) };
    case "pagerduty":
      return { routingKey: MASK };
    case "telegram":
      return { botToken: MASK, chatId: config.chatId };
    case "webhook": {
      const headers = config.headers as Record<string, string> | undefined;
      return headers
        ? { url: config.url, headers: Object.fromEntries(Object.keys(headers).map((name) => [name, MASK])) }
        : { url: config.url };
    }
    default:
      return { ...config };
  }
}

/**
 * The credentials in a channel's config, so that error messages and logs can be scrubbed of them:
 * keys, tokens, header values, and the secret parts of chat webhook URLs.
 */
export function channelSecrets(type: ChannelType, config: Record<string, unknown>): string[] {
  const secrets: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === "string" && value.length >= 6) secrets.push(value);
  };
  add(config.routingKey);
  add(config.botToken);
  if (typeof config.headers === "object" && config.headers !== null) for (const value of Object.values(config.headers)) add(value);
  if (type === "discord" || type === "slack" || type === "teams") {
    try {
      const url = new URL(String(config.webhookUrl));
      const segments = url.pathname.split("/");
      for (const at of secretSegments(segments)) if (!FORMAT_SUFFIXES.has(segments[at]!.toLowerCase())) add(segments[at]);
      add(url.search.slice(1));
    } catch {}
  }
  return secrets;
}

/** `text` with every one of `secrets` replaced by the mask. */
export function scrubSecrets(text: string, secrets: string[]): string {
  let scrubbed = text;
  for (const secret of secrets) scrubbed = scrubbed.split(secret).join(MASK);
  return scrubbed;
}

function invalidConfig(message: string): CertkeeperError {
  return new CertkeeperError("invalid_config", message);
}

function exampleConfig(type: ChannelType): string {
  return {
    email: '{"email": "ops@example.com"}',
    discord: '{"webhookUrl": "https://discord.com/api/webhooks/…"}',
    slack: '{"webhookUrl": "https://hooks.slack.com/services/…"}',
    webhook: '{"url": "https://example.com/hooks/certkeeper", "headers": {"Authorization": "Bearer …"}}',
    pagerduty: '{"routingKey": "<the 32-character integration key>"}',
    teams: '{"webhookUrl": "https://…/workflows/…/triggers/manual/paths/invoke?…"}',
    telegram: '{"botToken": "123456789:AAE…", "chatId": -1001234567890}',
  }[type];
}
