/**
 * Reading a CA's answers (RFC 9773 §4.2): the directory's `renewalInfo` URL, a RenewalInfo object's
 * suggested window, and the Retry-After that says when to ask again. Anything malformed is an error.
 */
import { HOUR, MINUTE } from "../base/time.ts";
import { httpHref, retryAfterMs } from "../net/mod.ts";

/** A CA's answer that cannot be used; the message is safe to log. */
export class AriFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = "AriFailure";
  }
}

/** How long after an answer certkeeper asks again (CONTRACT §19). */
export const RETRY_AFTER_MIN = MINUTE;
export const RETRY_AFTER_MAX = 24 * HOUR;
/** After an answer without Retry-After, and after an error. */
export const DEFAULT_RETRY = 6 * HOUR;

export interface SuggestedWindow {
  window: { start: number; end: number };
  explanationUrl: string | null;
}

/** Strict UTF-8 (a CA's bytes that are not refuse the answer); one decoder serves every answer. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

function json(body: Uint8Array, what: string): unknown {
  try {
    return JSON.parse(utf8.decode(body));
  } catch {
    throw new AriFailure(`the ${what} is not JSON`);
  }
}

/** The `renewalInfo` URL of an ACME directory, or null when the CA publishes none. */
export function readDirectory(body: Uint8Array): string | null {
  const doc = json(body, "ACME directory");
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new AriFailure("the ACME directory is not a JSON object");
  const url = (doc as { renewalInfo?: unknown }).renewalInfo;
  if (url === undefined) return null;
  if (typeof url !== "string" || httpHref(url) === null) throw new AriFailure("the ACME directory's renewalInfo is not an http(s) URL");
  return url;
}

/** RFC 9773 §4.2: `suggestedWindow` with RFC 3339 `start` before `end`, and an optional `explanationURL`. */
export function readRenewalInfo(body: Uint8Array): SuggestedWindow {
  const doc = json(body, "renewal information");
  const window = (doc as { suggestedWindow?: unknown } | null)?.suggestedWindow as { start?: unknown; end?: unknown } | undefined;
  if (typeof doc !== "object" || doc === null || typeof window !== "object" || window === null) {
    throw new AriFailure("the renewal information has no suggestedWindow");
  }
  const start = timestamp(window.start);
  const end = timestamp(window.end);
  if (start === null || end === null) throw new AriFailure("the suggested window's start or end is not an RFC 3339 time");
  if (end <= start) throw new AriFailure("the suggested window ends before it starts");
  const explanation = (doc as { explanationURL?: unknown }).explanationURL;
  // Kept as the URL parser reads it, not as the CA wrote it: it is shown to operators (notifications,
  // the CLI's note, the console), where a line break or a terminal escape of the CA's would act.
  const href = typeof explanation === "string" ? httpHref(explanation) : null;
  const explanationUrl = href !== null && href.length <= 2048 ? href : null;
  return { window: { start, end }, explanationUrl };
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * RFC 3339 date-time (with a time zone), in ms; null for anything else, a date that does not exist
 * (February 30th) or a time out of range (hour 24) included, which `Date.parse` would roll over.
 */
function timestamp(value: unknown): number | null {
  if (typeof value !== "string" || value.length > 64) return null;
  const parts = RFC3339.exec(value);
  if (!parts) return null;
  const [year, month, day, hour, minute, second] = parts.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60) return null;
  if (parts[8] !== undefined && (Number(parts[8]) > 23 || Number(parts[9]) > 59)) return null;
  // A leap second (:60, RFC 3339 5.6) is the instant after :59 ends, which ms since the epoch cannot
  // tell from the next minute's start: read as :59, plus a second (Date.parse refuses :60).
  const leap = second === 60;
  const parsed = Date.parse(leap ? `${value.slice(0, 17)}59${value.slice(19)}` : value);
  const ms = leap ? parsed + 1000 : parsed;
  if (!Number.isFinite(ms)) return null;
  // Year 0000 or 9999 moved by its offset leaves the four-digit years of RFC 3339 (shown: -000001, +010000).
  const utcYear = new Date(ms).getUTCFullYear();
  return utcYear >= 0 && utcYear <= 9999 ? ms : null;
}

/**
 * When to ask again after an answer: its Retry-After (whole delta-seconds or an HTTP-date), clamped
 * to 1 minute–24 hours (RFC 9773 §4.3: longer is taken as a day); 6 hours when absent or unreadable
 * (an unreadable one is the CA's error, retried as errors are).
 */
export function retryDelay(header: string | undefined, now: number): number {
  const delay = retryAfterMs(header, now, { fractions: false });
  if (delay === null) return DEFAULT_RETRY;
  return Math.min(RETRY_AFTER_MAX, Math.max(RETRY_AFTER_MIN, delay));
}
