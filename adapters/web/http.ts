/**
 * The HTTP plumbing of the web face: cookies with the right attributes, the same-origin check of
 * every form post, form bodies, the client's address, redirects.
 */

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

export class FormError extends Error {}

/** An `application/x-www-form-urlencoded` body of at most 64 KiB, as name → value (first value wins). */
export async function readForm(request: Request): Promise<Record<string, string>> {
  const type = request.headers.get("content-type")?.split(";")[0]!.trim().toLowerCase();
  if (type !== "application/x-www-form-urlencoded") throw new FormError("The form was not sent as a form.");
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) throw new FormError("The form is too large.");
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(text)) if (!(name in form)) form[name] = value;
  return form;
}

/**
 * The client's address for the sign-in slowdown: the connection's peer, unless that is a proxy on
 * this host or network (loopback, private, unique-local) that names the client in
 * X-Forwarded-For, whose last entry (the one that proxy added) is then taken.
 */
export function clientAddress(request: Request, peer: string | undefined): string | undefined {
  const forwarded = request.headers.get("x-forwarded-for");
  const last = forwarded?.split(",").map((s) => s.trim()).filter(Boolean).at(-1);
  if (last && (peer === undefined || isLocalAddress(peer))) return last;
  return peer;
}

function isLocalAddress(address: string): boolean {
  const ip = address.replace(/^::ffff:/i, "");
  return (
    /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/.test(ip) || ip === "::1" || /^f[cd][0-9a-f]{2}:/i.test(ip)
  );
}

/** A path of this site to go to after signing in; anything else becomes `/`. */
export function safeNext(value: string | null | undefined): string {
  return typeof value === "string" && /^\/(?![/\\])[^\s]*$/.test(value) && value.length < 512 ? value : "/";
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
