/** A certificate's page, its "Check now" and its edit form: GET /certificates/:id, POST …/check, POST …/edit. */
import type { Core } from "../../../core/app/mod.ts";
import { TAKES_ALERT_POLICY } from "../../../core/workspace/mod.ts";
import { authorize } from "../../../core/auth/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { patchCertificateBody } from "../forms.ts";
import { certificatePage } from "../views/certificate.ts";
import { modeOf, refusesInput } from "./dashboard.ts";
import { fieldOfRefusal, inConsoleWords } from "../words.ts";
import { refusedAt } from "../refused.ts";

export function certificateRoutes(core: Core): WebRoute[] {
  const { workspace, console } = core.accounts;
  return [
    {
      method: "GET",
      path: "/certificates/:id",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        const detail = await workspace.as(me, mode).certificate(params.id!);
        return htmlResponse(certificatePage({ me, mode, detail, notice: noticeOf(request) }));
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
    {
      method: "POST",
      path: "/certificates/:id/edit",
      // Name, thresholds, tags, mute, connect-to (and the alert policy where the API takes one), as PATCH.
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        const id = params.id!;
        const body = patchCertificateBody(form, { alertPolicy: TAKES_ALERT_POLICY });
        if (Object.keys(body).length === 0) {
          // Nothing to change is still a change asked for: refused to a member, and of a certificate that is there.
          authorize(me.user.role, "write");
          await workspace.as(me, mode).certificate(id);
          return redirect(`/certificates/${encodeURIComponent(id)}?mode=${mode}&notice=certificate-unchanged#edit`);
        }
        try {
          await console.as(me, mode).run("patchCertificate", { params: { id }, body });
        } catch (error) {
          if (!refusesInput(error) || error.status === 404) throw error;
          const detail = await workspace.as(me, mode).certificate(id);
          return htmlResponse(refusedAt(certificatePage({ me, mode, detail, error: inConsoleWords(error.message), form }), fieldOfRefusal(error), "edit"), { status: error.status });
        }
        return redirect(`/certificates/${encodeURIComponent(id)}?mode=${mode}&notice=certificate-updated#edit`);
      }),
    },
  ];
}
