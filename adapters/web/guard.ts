/**
 * What every web handler goes through: the signed-in user of the session cookie (or a redirect to
 * sign in), and for every change the CSRF checks (a same-origin Origin/Referer, then the session's
 * form token) before the form is read into the handler. Errors of core become error pages.
 */
import type { Core } from "../../core/app/mod.ts";
import type { SignedIn } from "../../core/accounts/mod.ts";
import { CertkeeperError } from "../../core/base/mod.ts";
import { html } from "./html.ts";
import { FormError, SESSION_COOKIE, cookie, fromThisSite, readForm, redirect, siteOrigin } from "./http.ts";
import { htmlResponse, page } from "./layout.ts";
import { inConsoleWords } from "./words.ts";

export interface WebRequest {
  request: Request;
  params: Record<string, string>;
  /** The client's address, when the server knows it (see http.ts clientAddress). */
  clientAddress?: string;
}

export type WebHandler = (input: WebRequest) => Promise<Response>;

export interface WebRoute {
  method: "GET" | "POST";
  /** Router-style path, `/settings/api-keys/:id/revoke`. */
  path: string;
  handle: WebHandler;
}

export type Form = Record<string, string>;

/** What a page's request line says beyond the request itself: who (user id) and, when it failed, why (a code). */
const facts = new WeakMap<Response, Record<string, string>>();

/** Notes `fields` for `response`'s request line (see {@link requestFacts}); returns the response. */
export function noted(response: Response, fields: Record<string, string>): Response {
  facts.set(response, { ...facts.get(response), ...fields });
  return response;
}

/** The facts noted for a page's request line: the signed-in user's id and the error code of a refusal. */
export function requestFacts(response: Response): Record<string, string> | undefined {
  return facts.get(response);
}

/** A page for signed-in users; others are sent to sign in and brought back. */
export function signedIn(core: Core, handle: (input: WebRequest, me: SignedIn) => Promise<Response>): WebHandler {
  return async (input) => {
    const me = await core.accounts.sessions.resume(cookie(input.request, SESSION_COOKIE));
    if (!me) return toSignIn(input.request);
    return noted(await rendered(me, () => handle(input, me)), { userId: me.user.id });
  };
}

/** A change (a form post) by a signed-in user, refused unless it comes from this site with the session's form token. */
export function change(core: Core, handle: (input: WebRequest, me: SignedIn, form: Form) => Promise<Response>): WebHandler {
  return async (input) => {
    if (!fromThisSite(input.request)) return refused();
    const me = await core.accounts.sessions.resume(cookie(input.request, SESSION_COOKIE));
    if (!me) return toSignIn(input.request);
    let form: Form;
    try {
      form = await readForm(input.request);
    } catch (error) {
      if (error instanceof FormError) return noted(formNotRead(me, error), { userId: me.user.id });
      throw error;
    }
    if (!core.accounts.sessions.formTokenMatches(me, form._csrf)) return noted(refused(), { userId: me.user.id });
    return noted(await rendered(me, () => handle(input, me, form)), { userId: me.user.id });
  };
}

/** The answer to a cross-site or token-less form post: nothing was done. */
export function refused(): Response {
  return noted(errorPage(undefined, {
    status: 403,
    title: "Request refused",
    message:
      "This form was not sent from a page of this site, or its security token is missing or expired, so nothing was changed. " +
      "Go back, reload the page and try again.",
  }), { code: "form_refused" });
}

/** The answer to a form that could not be read (400) or was too large to read (413). */
export function formNotRead(me: SignedIn | undefined, error: FormError): Response {
  const title = error.status === 413 ? "The form is too large" : "The form could not be read";
  return noted(errorPage(me, { status: error.status, title, message: error.message }), { code: error.status === 413 ? "payload_too_large" : "invalid_request" });
}

export function errorPage(
  me: SignedIn | undefined,
  error: { status: number; title: string; message: string; headers?: Record<string, string> },
): Response {
  const { status, title, message } = error;
  // Past the rate limit, the dashboard is refused as well until the wait is over: no link to it.
  const next =
    status === 429
      ? html`<p>The pages of certificates, channels and watches are refused until then; this one can be reloaded after the wait. The Account, API Keys and Members tabs still open.</p>`
      : html`<p><a href="/">Back to the dashboard</a></p>`;
  const body = page({ title, me, narrow: !me }, html`<h1>${title}</h1><p>${message}</p>${next}`);
  return htmlResponse(body, { status, headers: error.headers });
}

/**
 * Runs a handler, answering core's expected failures (permission, not found, validation, the rate
 * limit) with an error page that keeps the error's headers (Retry-After).
 */
async function rendered(me: SignedIn, handle: () => Promise<Response>): Promise<Response> {
  try {
    return await handle();
  } catch (error) {
    if (!(error instanceof CertkeeperError) || error.code === "internal_error") throw error;
    const title =
      error.code === "permission_denied"
        ? "Not allowed"
        : error.code === "rate_limit_exceeded"
          ? "Too many requests"
          : error.status === 404
            ? "Not found"
            : "That did not work";
    return noted(errorPage(me, { status: error.status, title, message: inConsoleWords(error.message), headers: error.headers }), { code: error.code });
  }
}

/**
 * To sign in, and back: to the page asked for, or, for a form sent once the session had ended, to the
 * page the form was on (this site's, by its Referer), saying that nothing was saved.
 */
function toSignIn(request: Request): Response {
  const url = new URL(request.url);
  if (request.method !== "GET" && request.method !== "HEAD") {
    const from = sameSitePath(request.headers.get("referer"), siteOrigin(request));
    return redirect(`/sign-in?notice=session-ended${from && from !== "/" ? `&next=${encodeURIComponent(from)}` : ""}`);
  }
  const next = url.pathname + url.search;
  return redirect(next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`);
}

/** The path (and query) of `referer` when it is a page of `origin` (this site as its visitors see it); null otherwise. */
function sameSitePath(referer: string | null, origin: string): string | null {
  if (!referer) return null;
  try {
    const from = new URL(referer);
    return from.origin.toLowerCase() === origin ? from.pathname + from.search : null;
  } catch {
    return null;
  }
}

/** The confirmation a redirect after a change shows, by a fixed name: no text of the URL reaches the page. */
const NOTICES: Record<string, string> = {
  "signed-out": "You are signed out.",
  "session-ended": "Your session had ended, so what you sent was not saved: sign in, then do it again.",
  "key-revoked": "The API key was revoked: every request with it is refused from now on.",
  "member-added": "The user was added. Tell them their initial password through a channel you trust.",
  "role-changed": "The role was changed; it applies at once, to their API keys too.",
  "member-removed": "The user was removed; their API keys are revoked and their sessions ended.",
  "certificate-added": "The certificate was added and is now monitored.",
  "certificate-updated": "The certificate's settings were saved.",
  "certificate-unchanged": "Nothing was changed: the form holds the certificate's settings as they were.",
  "channel-added": "The channel was added. Send it a test to see that alerts arrive.",
  "channel-updated": "The channel was saved.",
  "channel-enabled": "The channel is enabled: alerts go to it again.",
  "channel-disabled": "The channel is disabled: no alert goes to it until it is enabled.",
  "channel-removed": "The channel was removed; its pending notifications are cancelled.",
  "watch-added": "The watch was added; its first poll records what exists without alerts.",
  "watch-updated": "The watch was saved.",
  "watch-removed": "The watch was removed.",
  "certificate-removed": "The certificate is no longer monitored.",
  "password-changed": "Your password was changed. Every other session of yours has ended.",
  "certificate-checked": "The certificate was checked just now.",
  "watch-polled": "The watch is being polled now: reload in a moment to see its last poll and last error.",
};

export function noticeOf(request: Request): string | null {
  const name = new URL(request.url).searchParams.get("notice");
  return name !== null && Object.hasOwn(NOTICES, name) ? NOTICES[name]! : null;
}
