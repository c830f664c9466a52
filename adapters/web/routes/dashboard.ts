/** The dashboard: GET /, POST /dashboard/certificates, GET/POST /dashboard/certificates/:id/remove. */
import type { Core } from "../../../core/app/mod.ts";
import { CertkeeperError, type Mode } from "../../../core/base/mod.ts";
import { change, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { dashboardPage, removeCertificatePage, type DashboardFilters } from "../views/dashboard.ts";

export function modeOf(value: string | null | undefined): Mode {
  return value === "test" ? "test" : "live";
}

/** The filters of the address, as typed (the list operation validates them and names what is wrong). */
function filtersOf(url: URL): DashboardFilters {
  const get = (name: string) => url.searchParams.get(name)?.trim() || undefined;
  return { domain: get("domain"), status: get("status"), tag: get("tag"), cursor: get("cursor") };
}

export function dashboardRoutes(core: Core): WebRoute[] {
  const { workspace } = core.accounts;

  return [
    {
      method: "GET",
      path: "/",
      handle: signedIn(core, async ({ request }, me) => {
        const url = new URL(request.url);
        const mode = modeOf(url.searchParams.get("mode"));
        const filters = filtersOf(url);
        const data = await workspace.as(me, mode).dashboard(filters);
        return htmlResponse(dashboardPage({ me, mode, data, filters, notice: noticeOf(request) }));
      }),
    },
    {
      method: "POST",
      path: "/dashboard/certificates",
      handle: change(core, async (_input, me, form) => {
        const mode = modeOf(form.mode);
        try {
          await workspace.as(me, mode).addCertificate({ domain: form.domain, port: form.port, name: form.name });
        } catch (error) {
          // The API's own refusal (bad domain, duplicate, unreachable, plan limit), shown on the page with the input kept.
          // Not a refusal of the input (a bug, a permission, the rate limit): the error page of guard.ts.
          if (!(error instanceof CertkeeperError) || ["internal_error", "permission_denied", "rate_limit_exceeded"].includes(error.code)) throw error;
          const data = await workspace.as(me, mode).dashboard({});
          const page = dashboardPage({ me, mode, data, filters: {}, error: error.message, form: { domain: form.domain, port: form.port, name: form.name } });
          return htmlResponse(page, { status: error.status });
        }
        return redirect(`/?mode=${mode}&notice=certificate-added`);
      }),
    },
    {
      method: "GET",
      path: "/dashboard/certificates/:id/remove",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeOf(new URL(request.url).searchParams.get("mode"));
        const certificate = await workspace.as(me, mode).certificateToRemove(params.id!);
        return htmlResponse(removeCertificatePage(me, mode, certificate));
      }),
    },
    {
      method: "POST",
      path: "/dashboard/certificates/:id/remove",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await workspace.as(me, mode).removeCertificate(params.id!);
        return redirect(`/?mode=${mode}&notice=certificate-removed`);
      }),
    },
  ];
}
