/** GET /settings/account, POST /settings/account/password: a user's own account and password. */
import type { Core } from "../../../core/app/mod.ts";
import { MIN_PASSWORD_LENGTH } from "../../../core/accounts/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { SESSION_COOKIE, redirect, setCookie } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { accountPage } from "../views/account.ts";
import { refusedAt } from "../refused.ts";

/** Each refusal's answer, and the form field it is about (its `name`). */
const REFUSALS = {
  wrong_current: { status: 400, error: "The current password is wrong; nothing was changed.", field: "current" },
  mismatch: { status: 400, error: "The two new passwords differ; nothing was changed.", field: "confirm" },
  too_short: { status: 400, error: `The new password must have ${MIN_PASSWORD_LENGTH} to 1024 characters; nothing was changed.`, field: "next" },
  same: { status: 400, error: "The new password is the current one; choose another.", field: "next" },
  unavailable: { status: 503, error: "Passwords cannot be changed on this server: it has no password hasher.", field: undefined },
} as const;

export function accountRoutes(core: Core): WebRoute[] {
  const { passwordChange, sessions } = core.accounts;
  return [
    {
      method: "GET",
      path: "/settings/account",
      handle: signedIn(core, async ({ request }, me) => htmlResponse(accountPage({ me, notice: noticeOf(request) }))),
    },
    {
      method: "POST",
      path: "/settings/account/password",
      handle: change(core, async ({ request }, me, form) => {
        const result = await passwordChange.change(me, { current: form.current ?? "", next: form.next ?? "", confirm: form.confirm ?? "" });
        if (result.ok) {
          return redirect("/settings/account?notice=password-changed", {
            "set-cookie": setCookie(request, { name: SESSION_COOKIE, value: result.token, maxAgeSeconds: sessions.policy.lifetimeMs / 1000 }),
          });
        }
        if (result.reason === "throttled") {
          const seconds = result.retryAfterSeconds;
          const error = `Too many wrong passwords for this account. Wait ${seconds} second${seconds === 1 ? "" : "s"}, then try again.`;
          return htmlResponse(accountPage({ me, error }), { status: 429, headers: { "retry-after": String(seconds) } });
        }
        const refusal = REFUSALS[result.reason];
        return htmlResponse(refusedAt(accountPage({ me, error: refusal.error }), refusal.field), { status: refusal.status });
      }),
    },
  ];
}
