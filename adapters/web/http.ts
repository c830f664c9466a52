/**
 * The HTTP plumbing of the web face: cookies with the right attributes, the same-origin check of
 * every form post, form bodies, the client's address, redirects.
 */
import { CertkeeperError } from "../../core/base/mod.ts";
import { readBounded, urlEncodedPairs } from "../../core/http/mod.ts";

export const SESSION_COOKIE = "certkeeper_session";
/** Holds the sign-in form's token before there is a session (double-submit). */
export const SIGN_IN_COOKIE = "certkeeper_signin";

const MAX_FORM_BYTES = 64 * 1024;

export function cookie(request: Request, name: string): string | undefined {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** True when the browser reached us over HTTPS: directly, or through a proxy saying so. */
export function isHttps(request: Request): boolean {
  return new URL(request.url).protocol === "https:" || firstValue(request.headers.get("x-forwarded-proto"))?.toLowerCase() === "https";
}

/**
 * `name=value; Path=/; HttpOnly; SameSite=Strict`, plus `Secure` over HTTPS (a Secure cookie sent
 * over plain HTTP would not come back, and the site would be unusable without TLS).
 */
export function setCookie(request: Request, cookie: { name: string; value: string; maxAgeSeconds: number }): string {
  const maxAge = Math.max(0, Math.floor(cookie.maxAgeSeconds));
  return `${cookie.name}=${cookie.value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${isHttps(request) ? "; Secure" : ""}`;
}

export function clearCookie(request: Request, name: string): string {
  return setCookie(request, { name, value: "", maxAgeSeconds: 0 });
}

/** This site's origin as the browser sees it (a proxy's X-Forwarded-Proto and -Host honoured). */
export function siteOrigin(request: Request): string {
  const url = new URL(request.url);
  const host = firstValue(request.headers.get("x-forwarded-host")) ?? url.host;
  return `${isHttps(request) ? "https:" : url.protocol}//${host}`.toLowerCase();
}

/**
 * Whether a form post comes from a page of this site: its Origin (or, without one, its Referer) must
 * be this site's, and a Sec-Fetch-Site header, when sent, must say same-origin. A request with
 * neither Origin nor Referer is refused: every browser sends one of them with a form post.
 */
export function fromThisSite(request: Request): boolean {
  const fetchSite = request.headers.get("sec-fetch-site");
  if (fetchSite !== null && fetchSite !== "same-origin") return false;
  const expected = siteOrigin(request);
  const origin = request.headers.get("origin");
  if (origin !== null) return origin.toLowerCase() === expected;
  const referer = request.headers.get("referer");
  if (!referer) return false;
  try {
    return new URL(referer).origin.toLowerCase() === expected;
  } catch {
    return false;
  }
}

export class FormError extends Error {
  /** 400 for a form that cannot be read, 413 for one over the size limit. */
  constructor(
    message: string,
    readonly status: 400 | 413 = 400,
  ) {
    super(message);
  }
}

/**
 * An `application/x-www-form-urlencoded` body of at most 64 KiB, as name → value (first value wins).
 * A larger one is refused (FormError, status 413) without being read whole: a declared Content-Length
 * over the limit before reading anything, a chunked body as soon as it passes the limit.
 */
export async function readForm(request: Request): Promise<Record<string, string>> {
  const type = request.headers.get("content-type")?.split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new FormError("The form was not sent as a form.");
  let text: string;
  try {
    text = await readBounded(request, MAX_FORM_BYTES);
  } catch (error) {
    if (error instanceof CertkeeperError && error.code === "payload_too_large") {
      throw new FormError(`The form is larger than ${MAX_FORM_BYTES / 1024} KiB, so it was not read.`, 413);
    }
    // The browser hung up mid-form: nothing of ours failed.
    if (error instanceof CertkeeperError && error.code === "invalid_request") throw new FormError(error.message, 400);
    throw error;
  }
  const pairs = urlEncodedPairs(text);
  // Stored with U+FFFD in place of what was sent, a name or note would silently differ from it.
  if (pairs === null) throw new FormError("The form has %-escapes that do not decode to UTF-8, so it was not read.");
  const form: Record<string, string> = {};
  for (const [name, value] of pairs) if (!(name in form)) form[name] = value;
  return form;
}

/**
 * The client's address for the sign-in slowdown: the connection's peer. Only when that peer is this
 * host itself (loopback: a reverse proxy on the same machine) is the last entry of X-Forwarded-For
 * (the one that proxy added) taken instead. A peer on a private network is not trusted: behind
 * Docker's userland proxy or on an office network, any client could otherwise name its own address.
 * Without a known peer (the app called in-process) the header is not trusted either.
 */
export function clientAddress(request: Request, peer: string | undefined): string | undefined {
  if (peer === undefined || !isLoopback(peer)) return peer;
  const forwarded = request.headers.get("x-forwarded-for");
  const last = forwarded?.split(",").map((s) => s.trim()).filter(Boolean).at(-1);
  return last ?? peer;
}

/** 127.0.0.0/8, ::1, and the IPv4-mapped form of 127.0.0.0/8. */
function isLoopback(address: string): boolean {
  const ip = address.trim().toLowerCase().replace(/^::ffff:/, "");
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip) || ip === "::1" || ip === "0:0:0:0:0:0:0:1";
}

/** A path of this site to go to after signing in; anything else becomes `/`. */
export function safeNext(value: string | null | undefined): string {
  // A path of printable ASCII only: anything else cannot be a Location header's value as it is.
  return typeof value === "string" && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) && value.length < 512 ? value : "/";
}

export function redirect(location: string, headers: Record<string, string | string[]> = {}): Response {
  const response = new Response(null, { status: 303, headers: { location, "cache-control": "no-store" } });
  for (const [name, value] of Object.entries(headers)) {
    for (const one of Array.isArray(value) ? value : [value]) response.headers.append(name, one);
  }
  return response;
}

function firstValue(header: string | null): string | undefined {
  const value = header?.split(",")[0]?.trim();
  return value ? value : undefined;
}
