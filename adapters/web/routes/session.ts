/** GET and POST /sign-in, POST /sign-out. */
import type { Core } from "../../../core/app/mod.ts";
import { tokensMatch } from "../../../core/accounts/mod.ts";
import { randomBase62 } from "../../../core/base/mod.ts";
import { change, formNotRead, noticeOf, refused, type WebHandler, type WebRoute } from "../guard.ts";
import { SESSION_COOKIE, SIGN_IN_COOKIE, FormError, clearCookie, cookie, fromThisSite, readForm, redirect, safeNext, setCookie } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { signInPage } from "../views/sign_in.ts";

const SIGN_IN_TOKEN = /^[0-9A-Za-z]{32}$/;
const SIGN_IN_TOKEN_SECONDS = 24 * 3600;

export function sessionRoutes(core: Core): WebRoute[] {
  const { sessions, signIn } = core.accounts;

  /** The sign-in form's token: the one already in the browser's cookie, or a new one. */
  function signInToken(request: Request): { token: string; setCookie?: string } {
    const existing = cookie(request, SIGN_IN_COOKIE);
    if (existing && SIGN_IN_TOKEN.test(existing)) return { token: existing };
    const token = randomBase62(32);
    return { token, setCookie: setCookie(request, { name: SIGN_IN_COOKIE, value: token, maxAgeSeconds: SIGN_IN_TOKEN_SECONDS }) };
  }

  const showSignIn: WebHandler = async ({ request }) => {
    if (await sessions.resume(cookie(request, SESSION_COOKIE))) return redirect("/");
    const { token, setCookie: set } = signInToken(request);
    const next = safeNext(new URL(request.url).searchParams.get("next"));
    const error = signIn.available ? null : "Sign-in is not available on this server: it has no password hasher.";
    return htmlResponse(signInPage({ formToken: token, next, notice: noticeOf(request), error }), { headers: set ? { "set-cookie": set } : {} });
  };

  const submitSignIn: WebHandler = async ({ request, clientAddress }) => {
    // Login CSRF: a sign-in must come from this site's own form (Origin, then the double-submit token).
    if (!fromThisSite(request)) return refused();
    let form: Record<string, string>;
    try {
      form = await readForm(request);
    } catch (error) {
      if (error instanceof FormError) return error.status === 413 ? formNotRead(undefined, error) : refused();
      throw error;
    }
    const token = cookie(request, SIGN_IN_COOKIE);
    if (!token || !tokensMatch(token, form._csrf)) return refused();
    const next = safeNext(form.next);
    const email = (form.email ?? "").trim();
    const again = (status: number, error: string, headers: Record<string, string> = {}) =>
      htmlResponse(signInPage({ formToken: token, next, email, error }), { status, headers });
    if (!signIn.available) return again(503, "Sign-in is not available on this server: it has no password hasher.");

    const result = await signIn.attempt({ email, password: form.password ?? "", clientAddress });
    if (result.ok) {
      return redirect(next, {
        "set-cookie": [
          setCookie(request, { name: SESSION_COOKIE, value: result.token, maxAgeSeconds: sessions.policy.lifetimeMs / 1000 }),
          clearCookie(request, SIGN_IN_COOKIE),
        ],
      });
    }
    if (result.reason === "throttled") {
      const seconds = result.retryAfterSeconds;
      return again(
        429,
        `Too many failed sign-ins for this email address or from your network. Wait ${seconds} second${seconds === 1 ? "" : "s"}, then try again.`,
        { "retry-after": String(seconds) },
      );
    }
    return again(401, "The email address or the password is wrong.");
  };

  const signOut = change(core, async ({ request }) => {
    await sessions.end(cookie(request, SESSION_COOKIE));
    return redirect("/sign-in?notice=signed-out", { "set-cookie": clearCookie(request, SESSION_COOKIE) });
  });

  return [
    { method: "GET", path: "/sign-in", handle: showSignIn },
    { method: "POST", path: "/sign-in", handle: submitSignIn },
    { method: "POST", path: "/sign-out", handle: signOut },
  ];
}
