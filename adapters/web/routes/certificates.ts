/** A certificate's page and its "Check now": GET /certificates/:id, POST /certificates/:id/check. */
import type { Core } from "../../../core/app/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { certificatePage } from "../views/certificate.ts";
import { modeOf } from "./dashboard.ts";

export function certificateRoutes(core: Core): WebRoute[] {
  const { workspace } = core.accounts;
  return [
    {
      method: "GET",
      path: "/certificates/:id",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        const detail = await workspace.as(me, mode).certificate(params.id!);
        return htmlResponse(certificatePage(me, mode, detail, noticeOf(request)));
      }),
    },
    {
      method: "POST",
      path: "/certificates/:id/check",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        const checked = await workspace.as(me, mode).checkNow(params.id!);
        return redirect(`/certificates/${encodeURIComponent(checked.id)}?mode=${mode}&notice=certificate-checked`);
      }),
    },
  ];
}
