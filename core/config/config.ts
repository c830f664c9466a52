/** certkeeper's configuration: CONTRACT §1's environment variables, parsed and checked once. */
import { isIP } from "node:net";
import { DAY, HOUR, MINUTE, SECOND, parseDuration } from "../base/time.ts";
import { parseResolveRules, type ResolveRule } from "./resolve_rules.ts";
import type { AlertPolicy } from "../base/records.ts";
import { parseCaaIdentities, parseDnsServers, type CaaIdentity, type DnsServersSetting } from "./dns_settings.ts";
import { splitEscaped } from "./escaped_list.ts";
import { maskUrl, maskUrlsIn } from "./mask_url.ts";

import type { LogFormat, LogLevel } from "../base/log.ts";
export type { LogFormat, LogLevel };

export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  databaseAuthToken: string | undefined;
  checkIntervalMs: number;
  tlsTimeoutMs: number;
  checkConcurrency: number;
  /**
   * CERTKEEPER_CHECK_THREADS: threads that open checks' connections beside the event loop (0: the event
   * loop alone). Not in CONTRACT §1; the README's configuration table documents it.
   */
  checkThreads: number;
  logLevel: LogLevel;
  logFormat: LogFormat;
  resolve: ResolveRule[];
  extraCaFile: string | undefined;
  allowPrivateTargets: boolean;
  smtpUrl: string | undefined;
  mailFrom: string;
  deliveryRetryMs: number[];
  /** Time limit of one delivery attempt, connect to last byte of the answer. */
  deliveryTimeoutMs: number;
  metricsToken: string | undefined;
  /** CERTKEEPER_REVOCATION: ask OCSP responders and CRLs whether leaves are revoked (CONTRACT §14). */
  revocation: boolean;
  /** CERTKEEPER_CT_URL: base URL of a Cert Spotter-compatible issuances API (CONTRACT §15). */
  ctUrl: string;
  /** CERTKEEPER_CT_INTERVAL: how often each watch is polled. */
  ctIntervalMs: number;
  /** CERTKEEPER_CT_TOKEN: bearer token for the CT service; never logged. */
  ctToken: string | undefined;
  /** CERTKEEPER_CT_SOURCE: where watches find issuances: the search service (§15) or the logs themselves (§21). */
  ctSource: "search" | "logs";
  /** CERTKEEPER_CT_LOG_LIST: the logs followed with ctSource `logs`: an https URL or a file path. */
  ctLogList: string;
  /** Base URL of PagerDuty's Events API (the operator's: not subject to the private-address rule). */
  pagerdutyUrl: string;
  /** Base URL of Telegram's Bot API (the operator's: not subject to the private-address rule). */
  telegramUrl: string;
  /** Events and their settled deliveries older than this are deleted. */
  eventRetentionMs: number;
  /** CERTKEEPER_ALERT_POLICY: the alert policy of certificates added without one (CONTRACT §18). */
  alertPolicy: AlertPolicy;
  /** CERTKEEPER_ARI: ask CAs for their renewal information (RFC 9773); `off` asks none. */
  ari: boolean;
  /**
   * CERTKEEPER_ACME_DIRECTORIES over the built-ins: issuer names (compared case-insensitively with the
   * issuer's O and CN) and their ACME directory URLs, in order.
   */
  acmeDirectories: Array<{ issuer: string; url: string }>;
  /** CERTKEEPER_DNS_SERVERS: the resolvers asked for CAA, TLSA and TXT records (CONTRACT §22). */
  dnsServers: DnsServersSetting;
  /** CERTKEEPER_CAA_IDENTITIES: issuer names and their CAs' CAA domains, beside the built-in ones. */
  caaIdentities: CaaIdentity[];
}

/** The CAs whose ACME directories publish renewal information, unless CERTKEEPER_ACME_DIRECTORIES names them otherwise. */
export const BUILT_IN_ACME_DIRECTORIES: ReadonlyArray<{ issuer: string; url: string }> = [
  { issuer: "Let's Encrypt", url: "https://acme-v02.api.letsencrypt.org/directory" },
  { issuer: "Google Trust Services", url: "https://dv.acme-v02.api.pki.goog/directory" },
  { issuer: "ZeroSSL", url: "https://acme.zerossl.com/v2/DV90" },
];

export const DEFAULT_DELIVERY_RETRY = "5s,30s,2m,10m,30m,1h,2h,6h,12h";

export const DEFAULT_CONFIG: Config = {
  host: "127.0.0.1",
  port: 3000,
  databaseUrl: "file:./data/certkeeper.db",
  databaseAuthToken: undefined,
  checkIntervalMs: 6 * HOUR,
  tlsTimeoutMs: 10 * SECOND,
  checkConcurrency: 16,
  checkThreads: 1,
  logLevel: "info",
  logFormat: "auto",
  resolve: [],
  extraCaFile: undefined,
  allowPrivateTargets: false,
  smtpUrl: undefined,
  mailFrom: "certkeeper@localhost",
  deliveryRetryMs: DEFAULT_DELIVERY_RETRY.split(",").map(parseDuration),
  deliveryTimeoutMs: 10 * SECOND,
  metricsToken: undefined,
  revocation: true,
  ctUrl: "https://api.certspotter.com",
  ctIntervalMs: HOUR,
  ctToken: undefined,
  ctSource: "search",
  ctLogList: "https://www.gstatic.com/ct/log_list/v3/log_list.json",
  pagerdutyUrl: "https://events.pagerduty.com",
  telegramUrl: "https://api.telegram.org",
  eventRetentionMs: 90 * DAY,
  alertPolicy: "renewal",
  ari: true,
  acmeDirectories: [...BUILT_IN_ACME_DIRECTORIES],
  dnsServers: "system",
  caaIdentities: [],
};

export class ConfigError extends Error {
  constructor(variable: string, message: string) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

/** Reads CONTRACT §1's variables from `env`; unset or empty ones keep their defaults. */
export function configFromEnv(env: Record<string, string | undefined>): Config {
  const get = (name: string) => {
    const value = env[name]?.trim();
    return value === undefined || value === "" ? undefined : value;
  };
  const parse = <T>(name: string, fallback: T, read: (value: string) => T): T => {
    const value = get(name);
    if (value === undefined) return fallback;
    try {
      return read(value);
    } catch (error) {
      // A value refused is quoted back: never with the credentials it may carry.
      throw new ConfigError(name, maskUrlsIn((error as Error).message.replaceAll(value, maskUrl(value))));
    }
  };
  const d = DEFAULT_CONFIG;
  return {
    host: parse("CERTKEEPER_HOST", d.host, listenHost),
    port: parse("CERTKEEPER_PORT", d.port, listenPort),
    databaseUrl: get("CERTKEEPER_DATABASE_URL") ?? d.databaseUrl,
    databaseAuthToken: get("CERTKEEPER_DATABASE_AUTH_TOKEN"),
    checkIntervalMs: parse("CERTKEEPER_CHECK_INTERVAL", d.checkIntervalMs, positiveDuration),
    tlsTimeoutMs: parse("CERTKEEPER_TLS_TIMEOUT", d.tlsTimeoutMs, timeLimit),
    checkConcurrency: parse("CERTKEEPER_CHECK_CONCURRENCY", d.checkConcurrency, (v) => integer(v, 1, 1024)),
    checkThreads: parse("CERTKEEPER_CHECK_THREADS", d.checkThreads, (v) => integer(v, 0, 64)),
    logLevel: parse("CERTKEEPER_LOG_LEVEL", d.logLevel, logLevel),
    logFormat: parse("CERTKEEPER_LOG_FORMAT", d.logFormat, logFormat),
    resolve: parse("CERTKEEPER_RESOLVE", d.resolve, parseResolveRules),
    extraCaFile: get("CERTKEEPER_EXTRA_CA_FILE"),
    allowPrivateTargets: parse("CERTKEEPER_ALLOW_PRIVATE_TARGETS", d.allowPrivateTargets, boolean),
    smtpUrl: parse("CERTKEEPER_SMTP_URL", d.smtpUrl, smtpUrl),
    mailFrom: parse("CERTKEEPER_MAIL_FROM", d.mailFrom, mailAddress),
    deliveryRetryMs: parse("CERTKEEPER_DELIVERY_RETRY", d.deliveryRetryMs, (v) => v.split(",").map(positiveDuration)),
    deliveryTimeoutMs: parse("CERTKEEPER_DELIVERY_TIMEOUT", d.deliveryTimeoutMs, timeLimit),
    metricsToken: get("CERTKEEPER_METRICS_TOKEN"),
    revocation: parse("CERTKEEPER_REVOCATION", d.revocation, boolean),
    ctUrl: parse("CERTKEEPER_CT_URL", d.ctUrl, httpUrl),
    ctIntervalMs: parse("CERTKEEPER_CT_INTERVAL", d.ctIntervalMs, positiveDuration),
    ctToken: get("CERTKEEPER_CT_TOKEN"),
    ctSource: parse("CERTKEEPER_CT_SOURCE", d.ctSource, ctSource),
    ctLogList: parse("CERTKEEPER_CT_LOG_LIST", d.ctLogList, logListLocation),
    pagerdutyUrl: parse("CERTKEEPER_PAGERDUTY_URL", d.pagerdutyUrl, baseUrl),
    telegramUrl: parse("CERTKEEPER_TELEGRAM_URL", d.telegramUrl, baseUrl),
    eventRetentionMs: parse("CERTKEEPER_EVENT_RETENTION", d.eventRetentionMs, positiveDuration),
    alertPolicy: parse("CERTKEEPER_ALERT_POLICY", d.alertPolicy, alertPolicy),
    ari: parse("CERTKEEPER_ARI", d.ari, boolean),
    acmeDirectories: parse("CERTKEEPER_ACME_DIRECTORIES", d.acmeDirectories, acmeDirectories),
    dnsServers: parse("CERTKEEPER_DNS_SERVERS", d.dnsServers, parseDnsServers),
    caaIdentities: parse("CERTKEEPER_CAA_IDENTITIES", d.caaIdentities, parseCaaIdentities),
  };
}

/** The port to listen on, 0 for any free one (CERTKEEPER_PORT, `serve --port`). */
export function listenPort(text: string): number {
  return integer(text, 0, 65535);
}

/**
 * The address to listen on (CERTKEEPER_HOST, `serve --host`): an IP address or a host name, without
 * a port (that is CERTKEEPER_PORT's) or a scheme. Whether a name resolves is known only at the start.
 */
export function listenHost(text: string): string {
  const bare = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  if (isIP(bare) !== 0) return bare;
  if (/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\.?$/i.test(text)) return text;
  const port = /^(.*):(\d+)$/.exec(text);
  if (port && (isIP(port[1]!) !== 0 || /^[a-z0-9.-]+$/i.test(port[1]!))) {
    throw new Error(`"${text}" holds a port: give the address alone (${port[1]}) and the port in CERTKEEPER_PORT`);
  }
  throw new Error(`"${text}" is not an IP address or a host name (such as 127.0.0.1, 0.0.0.0, :: or localhost)`);
}

/**
 * The sender of alert emails (CERTKEEPER_MAIL_FROM): an address, `alerts@example.com`, or an address
 * with a display name, `certkeeper <alerts@example.com>`. Anything else would leave mail without a
 * From header, found out only when a relay refuses it.
 */
function mailAddress(text: string): string {
  const address = /^[^<>@]*<([^<>]+)>$/.exec(text)?.[1]?.trim() ?? text;
  if (!/^[^\s@<>(),;:"\\]+@[^\s@<>(),;:"\\]+$/.test(address)) {
    throw new Error(`"${text}" is not an email address: use alerts@example.com or "certkeeper <alerts@example.com>"`);
  }
  return text;
}

function alertPolicy(text: string): AlertPolicy {
  if (text === "renewal" || text === "days") return text;
  throw new Error(`"${text}" is not an alert policy: use renewal or days`);
}

/**
 * `name=url[,name=url…]`: each pair overrides the built-in of the same name (case-insensitively) or
 * adds one; the built-ins stay otherwise. The directories are the operator's choice, like the SMTP
 * server: any http(s) URL, not subject to the private-address rule.
 */
function acmeDirectories(text: string): Array<{ issuer: string; url: string }> {
  const given = splitEscaped(text).map((pair) => {
    const at = pair.indexOf("=");
    const issuer = at < 0 ? "" : pair.slice(0, at).trim();
    const url = at < 0 ? "" : pair.slice(at + 1).trim();
    if (issuer === "" || url === "") throw new Error(`"${pair.trim()}" is not a name=url pair, such as Let's Encrypt=https://acme-v02.api.letsencrypt.org/directory`);
    return { issuer, url: httpUrl(url) };
  });
  const named = new Set<string>();
  for (const { issuer } of given) {
    // One directory an issuer: a second is a typo or a paste, and which one a leaf's CA is asked at must not be a guess.
    if (named.has(issuer.toLowerCase())) throw new Error(`"${issuer}" is given twice (names are compared ignoring case); an issuer has one directory`);
    named.add(issuer.toLowerCase());
  }
  return [...given, ...BUILT_IN_ACME_DIRECTORIES.filter((entry) => !named.has(entry.issuer.toLowerCase()))];
}

function integer(text: string, min: number, max: number): number {
  // Digits only: Number() would also read 0x1F90, 0b11 and 3e3.
  const value = /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`"${text}" is not a whole number from ${min} to ${max}`);
  }
  return value;
}

function positiveDuration(text: string): number {
  const ms = parseDuration(text);
  if (ms <= 0) throw new Error(`"${text}" must be longer than zero`);
  return ms;
}

/** Longest time limit of one attempt (a retrieval, a delivery): beyond it, a limit protects nothing. */
const MAX_TIME_LIMIT_MS = 10 * MINUTE;

function timeLimit(text: string): number {
  const ms = positiveDuration(text);
  if (ms > MAX_TIME_LIMIT_MS) throw new Error(`"${text}" is longer than the most a time limit may be, 10m`);
  return ms;
}

function boolean(text: string): boolean {
  const value = text.toLowerCase();
  if (["1", "true", "yes", "on"].includes(value)) return true;
  if (["0", "false", "no", "off"].includes(value)) return false;
  throw new Error(`"${text}" is not a boolean: use true or false`);
}

function logFormat(text: string): LogFormat {
  if (text === "json" || text === "pretty" || text === "auto") return text;
  throw new Error(`"${text}" is not a log format: use json, pretty or auto`);
}

function logLevel(text: string): LogLevel {
  if (text === "debug" || text === "info" || text === "warn" || text === "error") return text;
  throw new Error(`"${text}" is not a log level: use debug, info, warn or error`);
}

function httpUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL: use https://host[:port]`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("use an http:// or https:// URL");
  // Never sent: the HTTP client refuses a URL that carries credentials, so every request would fail.
  if (url.username || url.password) throw new Error("give the URL without a user name or password");
  return text.replace(/\/+$/, "");
}

function ctSource(text: string): "search" | "logs" {
  if (text === "search" || text === "logs") return text;
  throw new Error(`"${text}" is not a CT source: use search or logs`);
}

/** An https URL, or a file path (anything without a scheme). */
function logListLocation(text: string): string {
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return text;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`"${text}" is not a URL: give an https:// URL or a file path`);
  }
  if (url.protocol !== "https:") throw new Error(`"${text}": give an https:// URL or a file path`);
  return text;
}

function smtpUrl(text: string): string {
  const url = new URL(text);
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") throw new Error("use smtp://user:pass@host:port or smtps://…");
  return text;
}

/** An http(s) base URL without user info, query or fragment; returned without a trailing slash. */
function baseUrl(text: string): string {
  const url = new URL(text);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error("use an http:// or https:// URL");
  if (url.username || url.password || url.search || url.hash) throw new Error("give the base URL only, without credentials, query or fragment");
  return url.href.replace(/\/+$/, "");
}

/** How long a claimed certificate or delivery stays leased to one process. */
export const LEASE_MS = 2 * MINUTE;
