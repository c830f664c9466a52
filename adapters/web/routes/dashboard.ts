/** The dashboard: GET /, POST /dashboard/certificates, GET/POST /dashboard/certificates/:id/remove. */
import type { Core } from "../../../core/app/mod.ts";
import { CertkeeperError, type Mode } from "../../../core/base/mod.ts";
import type { CertificateView } from "../../../core/schemas/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { addCertificateBody } from "../forms.ts";
import { dashboardPage, removeCertificatePage, type CertificateFormInput, type DashboardFilters } from "../views/dashboard.ts";
import { fieldOfRefusal, inConsoleWords } from "../words.ts";
import { refusedAt } from "../refused.ts";

export function modeOf(value: string | null | undefined): Mode {
  return value === "test" ? "test" : "live";
}

/**
 * The filters of the address, as typed (the list operation validates them and names what is wrong);
 * tags are stored lower-case, so the one typed is looked for so too.
 */
function filtersOf(url: URL): DashboardFilters {
  const get = (name: string) => url.searchParams.get(name)?.trim() || undefined;
  return { domain: get("domain"), status: get("status"), tag: get("tag")?.toLowerCase(), renewal: get("renewal"), cursor: get("cursor") };
}

/**
 * Whether an error refuses what the user typed (shown on the form, input kept), rather than the
 * request itself (a bug, a permission, the rate limit: guard.ts' error page).
 */
export function refusesInput(error: unknown): error is CertkeeperError {
  return error instanceof CertkeeperError && !["internal_error", "permission_denied", "rate_limit_exceeded", "storage_unavailable"].includes(error.code);
}

export function dashboardRoutes(core: Core): WebRoute[] {
  const { console } = core.accounts;

  return [
    {
      method: "GET",
      path: "/",
      handle: signedIn(core, async ({ request }, me) => {
        const url = new URL(request.url);
        const mode = modeOf(url.searchParams.get("mode"));
        const filters = filtersOf(url);
        const data = await console.as(me, mode).dashboard(filters);
        return htmlResponse(dashboardPage({ me, mode, data, filters, notice: noticeOf(request) }));
      }),
    },
    {
      method: "POST",
      path: "/dashboard/certificates",
      handle: change(core, async (_input, me, form) => {
        const mode = modeOf(form.mode);
        const acting = console.as(me, mode);
        let created: CertificateView;
        try {
          created = (await acting.run("addCertificate", { body: addCertificateBody(form) })).data as CertificateView;
        } catch (error) {
          // The API's own refusal (bad domain, duplicate, unreachable, plan limit), shown on the page with the input kept.
          if (!refusesInput(error)) throw error;
          // Already monitored: the list below shows that one, in the console's words rather than the API's.
          const duplicate = error.code === "duplicate_domain" && form.domain?.trim();
          const filters = duplicate ? { domain: form.domain!.trim().toLowerCase() } : {};
          const data = await console.as(me, mode).dashboard(filters);
          const message = duplicate ? `“${form.domain!.trim()}” is already monitored with these settings: it is listed below.` : inConsoleWords(error.message);
          const input: CertificateFormInput = form;
          const page = dashboardPage({ me, mode, data, filters, error: message, form: input });
          return htmlResponse(refusedAt(page, duplicate ? "domain" : fieldOfRefusal(error), "add-certificate"), { status: error.status });
        }
        return redirect(`/certificates/${encodeURIComponent(created.id)}?mode=${mode}&notice=certificate-added`);
      }),
    },
    {
      method: "GET",
      path: "/dashboard/certificates/:id/remove",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        const certificate = await core.accounts.workspace.as(me, mode).certificateToRemove(params.id!);
        return htmlResponse(removeCertificatePage(me, mode, certificate));
      }),
    },
    {
      method: "POST",
      path: "/dashboard/certificates/:id/remove",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await console.as(me, mode).run("deleteCertificate", { params: { id: params.id! } });
        return redirect(`/?mode=${mode}&notice=certificate-removed`);
      }),
    },
  ];
}
