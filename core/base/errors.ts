/**
 * The closed set of error codes, their HTTP statuses, and the one error class that carries them.
 *
 * Expected failures (a bad field, a revoked key, a domain without a certificate) are thrown as
 * {@link CertkeeperError}; anything else is a bug and is rendered as `internal_error`.
 */

/** Every HTTP status an error code maps to, in one exhaustive table. */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_domain: 400,
  invalid_channel_type: 400,
  invalid_config: 400,
  invalid_webhook_url: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  expired_api_key: 401,
  certificate_limit_reached: 402,
  channel_limit_reached: 402,
  watch_limit_reached: 402,
  permission_denied: 403,
  certificate_not_found: 404,
  channel_not_found: 404,
  watch_not_found: 404,
  import_not_found: 404,
  not_found: 404,
  method_not_allowed: 405,
  duplicate_domain: 409,
  duplicate_watch: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  certificate_unreachable: 422,
  rate_limit_exceeded: 429,
  internal_error: 500,
  storage_unavailable: 503,
} as const;

/**
 * An error code as callers see it. `certificate_unreachable` is internal only: it is rendered as
 * `certificate_not_found` with status 422 (CONTRACT §4: the add operation's "no certificate retrievable").
 */
export type ErrorCode = Exclude<keyof typeof ERROR_STATUS, "certificate_unreachable"> | "certificate_unreachable";

/** The code as it appears on the wire. */
export type PublicErrorCode = Exclude<ErrorCode, "certificate_unreachable">;

export class CertkeeperError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Extra response headers (Retry-After, Allow). */
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, options: { headers?: Record<string, string>; cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "CertkeeperError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.headers = options.headers ?? {};
  }

  /** The code as it is rendered on the wire. */
  get publicCode(): PublicErrorCode {
    return this.code === "certificate_unreachable" ? "certificate_not_found" : this.code;
  }
}

/** The failure envelope: `{ error: { code, message } }` and nothing else. */
export interface ErrorBody {
  error: { code: PublicErrorCode; message: string };
}

export function errorBody(error: CertkeeperError): ErrorBody {
  return { error: { code: error.publicCode, message: error.message } };
}

export const INTERNAL_ERROR_MESSAGE = "Something went wrong on our side; the request id identifies it in the logs.";

/** Turns anything thrown into a CertkeeperError; unknown errors become `internal_error`. */
export function asCertkeeperError(error: unknown): CertkeeperError {
  if (error instanceof CertkeeperError) return error;
  return new CertkeeperError("internal_error", INTERNAL_ERROR_MESSAGE, { cause: error });
}

/**
 * Quotes a caller-supplied value for an error message, shortened so messages stay readable: a string
 * in quotes, anything else as JSON writes it (`0`, `null`, `[1]`), so the string "443" and the number
 * 443 read apart.
 */
export function quote(value: unknown): string {
  const shorten = (text: string) => {
    const characters = [...text]; // by code point, so an emoji is never cut in half
    return characters.length > 80 ? `${characters.slice(0, 77).join("")}...` : text;
  };
  if (typeof value === "string") return JSON.stringify(shorten(value));
  // A number JSON has no spelling for (1e400 is read as Infinity) is named as it is, not as null.
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  // What JSON cannot write (a BigInt, an object that holds itself: the embedding API's callers can pass
  // them) is named as JavaScript writes it; the refusal must not fail.
  if (typeof value === "bigint") return `${value}n`;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    json = undefined;
  }
  return shorten(json ?? String(value));
}

/**
 * Levels of arrays and objects a body may nest (the API's own bodies nest a few). A parser reads far
 * deeper than code that walks the value again, serialising or validating it, can follow on its stack.
 */
export const MAX_BODY_DEPTH = 32;

/**
 * Whether `value` nests arrays and objects more than `limit` levels deep; walked without recursion (an
 * object met again, in a value that holds itself, is not walked twice).
 */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  const seen = new WeakSet<object>();
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== "object" || item === null || seen.has(item)) continue;
    if (depth > limit) return true;
    seen.add(item);
    for (const inner of Array.isArray(item) ? item : Object.values(item)) {
      if (typeof inner === "object" && inner !== null) pending.push([inner, depth + 1]);
    }
  }
  return false;
}

/** Most bytes of a request body an operation reads unless it says otherwise (CONTRACT §4). */
export const MAX_BODY_BYTES = 64 * 1024;

/** 413 `payload_too_large`: a body (or an import item, judged as that body) over `maxBytes`. */
export function payloadTooLarge(maxBytes: number = MAX_BODY_BYTES): CertkeeperError {
  const size = maxBytes >= 1024 * 1024 ? `${maxBytes / (1024 * 1024)} MiB` : `${maxBytes / 1024} KiB`;
  return new CertkeeperError("payload_too_large", `The request body is larger than ${size}.`);
}
