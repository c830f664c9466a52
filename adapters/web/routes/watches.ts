/**
 * The Watches tab (Certificate Transparency): the list; adding, editing, polling and removing watches,
 * each the API's operation run as the signed-in user (members only read).
 */
import type { Core } from "../../../core/app/mod.ts";
import type { SignedIn } from "../../../core/accounts/mod.ts";
import { CertkeeperError, type Mode } from "../../../core/base/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { watchBody } from "../forms.ts";
import { removeWatchPage, watchFormPage, watchesPage } from "../views/watches.ts";
import { modeOf, refusesInput } from "./dashboard.ts";
import { fieldOfRefusal, inConsoleWords } from "../words.ts";
import { refusedAt } from "../refused.ts";

export function watchRoutes(core: Core): WebRoute[] {
  const { console } = core.accounts;
  const modeIn = (request: Request) => modeOf(new URL(request.url).searchParams.get("mode"));
  const watchOf = async (me: SignedIn, mode: Mode, id: string) => (await console.as(me, mode).run("getWatch", { params: { id } })).data as Record<string, unknown>;
  const list = async (me: SignedIn, mode: Mode) => {
    const watches = await console.as(me, mode).watches();
    if (watches === null) throw new CertkeeperError("not_found", "This server has no Certificate Transparency watches.");
    return watches;
  };
  return [
    {
      method: "GET",
      path: "/watches",
      handle: signedIn(core, async ({ request }, me) => {
        const mode = modeIn(request);
        return htmlResponse(watchesPage({ me, mode, watches: await list(me, mode), notice: noticeOf(request) }));
      }),
    },
    {
      method: "POST",
      path: "/watches",
      handle: change(core, async (_input, me, form) => {
        const mode = modeOf(form.mode);
        try {
          await console.as(me, mode).run("addWatch", { body: watchBody(form, { withDomain: true }) });
        } catch (error) {
          if (!refusesInput(error)) throw error;
          return htmlResponse(refusedAt(watchesPage({ me, mode, watches: await list(me, mode), error: inConsoleWords(error.message), form }), fieldOfRefusal(error), "add-watch"), { status: error.status });
        }
        return redirect(`/watches?mode=${mode}&notice=watch-added`);
      }),
    },
    {
      method: "GET",
      path: "/watches/:id/edit",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeIn(request);
        return htmlResponse(watchFormPage({ me, mode, watch: await watchOf(me, mode, params.id!) }));
      }),
    },
    {
      method: "POST",
      path: "/watches/:id/edit",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        try {
          await console.as(me, mode).run("patchWatch", { params: { id: params.id! }, body: watchBody(form, { withDomain: false }) });
        } catch (error) {
          if (!refusesInput(error) || error.status === 404) throw error;
          return htmlResponse(refusedAt(watchFormPage({ me, mode, watch: await watchOf(me, mode, params.id!), form, error: inConsoleWords(error.message) }), fieldOfRefusal(error)), { status: error.status });
        }
        return redirect(`/watches?mode=${mode}&notice=watch-updated`);
      }),
    },
    {
      method: "POST",
      path: "/watches/:id/poll",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await console.as(me, mode).run("pollWatch", { params: { id: params.id! } });
        return redirect(`/watches?mode=${mode}&notice=watch-polled`);
      }),
    },
    {
      method: "GET",
      path: "/watches/:id/remove",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeIn(request);
        return htmlResponse(removeWatchPage(me, mode, await watchOf(me, mode, params.id!)));
      }),
    },
    {
      method: "POST",
      path: "/watches/:id/remove",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await console.as(me, mode).run("deleteWatch", { params: { id: params.id! } });
        return redirect(`/watches?mode=${mode}&notice=watch-removed`);
      }),
    },
  ];
}
