/** The Channels and Watches tabs: GET /channels, POST /channels/:id/test, GET /watches. */
import type { Core } from "../../../core/app/mod.ts";
import { CertkeeperError } from "../../../core/base/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { channelsPage } from "../views/channels.ts";
import { watchesPage } from "../views/watches.ts";
import { modeOf } from "./dashboard.ts";

export function channelRoutes(core: Core): WebRoute[] {
  const { workspace } = core.accounts;
  return [
    {
      method: "GET",
      path: "/channels",
      handle: signedIn(core, async ({ request }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        return htmlResponse(channelsPage({ me, mode, channels: await workspace.as(me, mode).channels() }));
      }),
    },
    {
      method: "POST",
      path: "/channels/:id/test",
      // The answer is the page itself, with how the test went: nothing of it travels in an address.
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        const acting = workspace.as(me, mode);
        const result = await acting.testChannel(params.id!);
        const channels = await acting.channels();
        const name = channels.find((channel) => channel.id === result.channelId)?.name ?? result.channelId;
        if (result.status === "delivered") {
          const how = result.responseStatus === null ? "" : ` (it answered ${result.responseStatus})`;
          return htmlResponse(channelsPage({ me, mode, channels, notice: `The test notification reached “${name}”${how}.` }));
        }
        return htmlResponse(channelsPage({ me, mode, channels, error: `The test notification to “${name}” failed: ${result.error ?? "no answer"}.` }));
      }),
    },
    {
      method: "GET",
      path: "/watches",
      handle: signedIn(core, async ({ request }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        const watches = await workspace.as(me, mode).watches();
        if (watches === null) throw new CertkeeperError("not_found", "This server has no Certificate Transparency watches.");
        return htmlResponse(watchesPage(me, mode, watches, noticeOf(request)));
      }),
    },
    {
      method: "POST",
      path: "/watches/:id/poll",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await workspace.as(me, mode).pollWatch(params.id!);
        return redirect(`/watches?mode=${mode}&notice=watch-polled`);
      }),
    },
  ];
}
