/** The API Keys tab: GET/POST /settings/api-keys, GET/POST /settings/api-keys/:id/revoke. */
import type { Core } from "../../../core/app/mod.ts";
import { mayManageKeys } from "../../../core/accounts/mod.ts";
import { CertkeeperError } from "../../../core/base/mod.ts";
import { change, errorPage, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { apiKeysPage, revokeKeyPage } from "../views/api_keys.ts";
import { sendOnce } from "../once.ts";
import { fieldOfRefusal, inConsoleWords } from "../words.ts";
import { refusedAt } from "../refused.ts";

export function apiKeyRoutes(core: Core): WebRoute[] {
  const { apiKeys } = core.accounts;
  const notAllowed = (me: Parameters<typeof errorPage>[0]) =>
    errorPage(me, { status: 403, title: "Not allowed", message: "Members may only look at API keys: ask an owner or admin to create or revoke one." });

  return [
    { method: "GET", path: "/settings", handle: async () => redirect("/settings/api-keys") },
    {
      method: "GET",
      path: "/settings/api-keys",
      handle: signedIn(core, async ({ request }, me) =>
        htmlResponse(apiKeysPage({ me, keys: await apiKeys.list(me.user), notice: noticeOf(request) })),
      ),
    },
    {
      method: "POST",
      path: "/settings/api-keys",
      handle: change(core, async (_input, me, form) => {
        if (!mayManageKeys(me.user.role)) return notAllowed(me);
        const sending = await sendOnce(form.once, me.user.id);
        if (sending === "done already") {
          const error = "This form was sent already: the key was created then, and its secret shown that once. If it was not copied, revoke that key and create another.";
          return htmlResponse(apiKeysPage({ me, keys: await apiKeys.list(me.user), error }));
        }
        try {
          const created = await apiKeys.create(me.user, { name: form.name ?? "", mode: form.mode ?? "live" });
          sending.finished(true);
          // Answered here, not redirected: the secret must not travel through a URL or be fetchable again.
          return htmlResponse(apiKeysPage({ me, keys: await apiKeys.list(me.user), created }));
        } catch (error) {
          sending.finished(false);
          if (!(error instanceof CertkeeperError) || error.code !== "invalid_request") throw error;
          const page = apiKeysPage({ me, keys: await apiKeys.list(me.user), error: inConsoleWords(error.message), form });
          // The name (its own words name it), or the mode (a crafted post: the form offers two).
          return htmlResponse(refusedAt(page, fieldOfRefusal(error) ?? (error.message.startsWith("Mode ") ? "mode" : undefined)), { status: 400 });
        }
      }),
    },
    {
      method: "GET",
      path: "/settings/api-keys/:id/revoke",
      handle: signedIn(core, async ({ params }, me) => {
        if (!mayManageKeys(me.user.role)) return notAllowed(me);
        const key = await apiKeys.get(me.user, params.id!);
        if (!key.mayRevoke) return errorPage(me, { status: 403, title: "Not allowed", message: "Only owners may revoke an owner's API keys." });
        return htmlResponse(revokeKeyPage(me, key));
      }),
    },
    {
      method: "POST",
      path: "/settings/api-keys/:id/revoke",
      handle: change(core, async ({ params }, me) => {
        if (!mayManageKeys(me.user.role)) return notAllowed(me);
        await apiKeys.revoke(me.user, params.id!);
        return redirect("/settings/api-keys?notice=key-revoked");
      }),
    },
  ];
}
