/**
 * The dashboard: counts per status, the chart of expiries per week, the certificates found by domain,
 * status and tag (a page at a time, by cursor, however many there are), add and remove a certificate.
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import { type DashboardPage, LIST_TAKES_TAGS } from "../../../core/workspace/mod.ts";
import { CERTIFICATE_STATUSES, type Mode } from "../../../core/base/mod.ts";
import type { CertificateView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";
import { expiryChart } from "./expiry_chart.ts";

export interface DashboardFilters {
  domain?: string;
  status?: string;
  tag?: string;
  cursor?: string;
}

export interface DashboardView {
  me: SignedIn;
  mode: Mode;
  data: DashboardPage;
  filters: DashboardFilters;
  notice?: string | null;
  error?: string | null;
  form?: { domain?: string; port?: string; name?: string };
}

/** A dashboard address keeping the mode and the filters, with `changes` applied (undefined drops one). */
export function dashboardHref(mode: Mode, filters: DashboardFilters, changes: Partial<Record<keyof DashboardFilters, string | undefined>> = {}): string {
  const params = new URLSearchParams({ mode });
  const merged = { ...filters, ...changes };
  for (const key of ["domain", "status", "tag", "cursor"] as const) if (merged[key]) params.set(key, merged[key]!);
  return `/?${params}`;
}

export function dashboardPage(view: DashboardView): Html {
  const { me, mode, data, filters } = view;
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, label: string) => html`<a href="/?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${label}</a>`;
  const filtered = Boolean(filters.domain || filters.status || filters.tag);
  return page(
    { title: "Dashboard", me, tab: "dashboard", notice: view.notice, error: view.error },
    html`<h1>Dashboard</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
<section aria-labelledby="counts-heading">
<h2 id="counts-heading">${data.summary.total} certificate${data.summary.total === 1 ? "" : "s"} (${mode})</h2>
<ul class="counts">${CERTIFICATE_STATUSES.map((status) => {
      const count = data.summary.byStatus[status] ?? 0;
      const current = filters.status === status;
      return html`<li><a class="count status-${status}" href="${dashboardHref(mode, {}, { status })}" data-status="${status}"${current ? html` aria-current="true"` : ""}>
<span class="n">${count}</span> ${status}</a></li>`;
    })}</ul>
</section>
${expiryChart(data.summary.expiringPerWeek, mode)}
<h2 id="certificates-heading">Certificates</h2>
${filterForm(mode, filters)}
${
  data.certificates.length === 0
    ? html`<p id="no-certificates">${filtered ? "No certificate matches these filters." : `No certificates are monitored in ${mode} mode yet.`}</p>`
    : html`<div class="table-wrap"><table aria-labelledby="certificates-heading" id="certificates">
<thead><tr><th scope="col">Status</th><th scope="col">Certificate</th><th scope="col">Days left</th><th scope="col">Expires</th>
<th scope="col">Issuer</th><th scope="col">Last check</th>${write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead>
<tbody>${data.certificates.map((certificate) => certificateRow(certificate, mode, write))}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages of certificates">${
      filters.cursor ? html`<a href="${dashboardHref(mode, filters, { cursor: undefined })}">First page</a>` : ""
    }${data.nextCursor ? html`<a rel="next" href="${dashboardHref(mode, filters, { cursor: data.nextCursor })}">Next page</a>` : ""}</nav>
${write ? addForm(me, mode, view.form) : ""}
<p><a href="/channels?mode=${mode}">Notification channels (${mode})</a></p>`,
  );
}

function filterForm(mode: Mode, filters: DashboardFilters): Html {
  return html`<form class="filters" method="get" action="/" role="search" aria-label="Find certificates">
<input type="hidden" name="mode" value="${mode}">
<div class="row">
<div><label for="filter-domain">Domain contains</label><input id="filter-domain" name="domain" type="search" value="${filters.domain ?? ""}"
autocapitalize="off" spellcheck="false" placeholder="example.com"></div>
<div><label for="filter-status">Status</label><select id="filter-status" name="status"><option value="">Any status</option>${CERTIFICATE_STATUSES.map(
    (status) => html`<option value="${status}"${filters.status === status ? html` selected` : ""}>${status}</option>`,
  )}</select></div>
${
  LIST_TAKES_TAGS
    ? html`<div><label for="filter-tag">Tag</label><input id="filter-tag" name="tag" type="text" value="${filters.tag ?? ""}" autocapitalize="off" spellcheck="false"
aria-describedby="filter-tag-hint"><div id="filter-tag-hint" class="muted small">Several: a comma list; all must be carried.</div></div>`
    : ""
}
</div>
<button type="submit">Find</button> ${filters.domain || filters.status || filters.tag ? html`<a class="button secondary" href="/?mode=${mode}">Clear</a>` : ""}
</form>`;
}

function certificateRow(c: CertificateView, mode: Mode, write: boolean): Html {
  const days = c.daysUntilExpiry;
  return html`<tr data-certificate-id="${c.id}" data-status="${c.status}">
<td><span class="badge status-${c.status}">${c.status}</span>${
    c.statusReason && c.statusReason !== c.status ? html`<div class="muted small">${c.statusReason.replace(/_/g, " ")}</div>` : ""
  }${revocationNote(c)}</td>
<td><a href="/certificates/${c.id}?mode=${mode}"><strong>${c.name}</strong></a>${
    c.name !== c.domain || c.port !== 443 ? html`<div class="mono small">${c.domain}:${c.port}</div>` : ""
  }${tagList(c.tags)}${muted(c.mutedUntil)}</td>
<td class="num">${days < 0 ? html`expired ${-days} d ago` : days}</td><td>${when(c.expiresAt)}</td><td>${c.issuer}</td><td>${when(c.lastCheckedAt)}</td>
${write ? html`<td><a href="/dashboard/certificates/${c.id}/remove?mode=${mode}">Remove<span class="visually-hidden"> ${c.domain}</span></a></td>` : ""}
</tr>`;
}

/** When and why a revoked certificate was revoked; nothing for any other. */
function revocationNote(c: CertificateView): Html | string {
  const r = c.revocation;
  if (r?.status !== "revoked") return "";
  return html`<div class="muted small">${r.reason ? `${r.reason}, ` : ""}${r.revokedAt ? html`since ${when(r.revokedAt)}` : "by its CA"} (${r.source === "crl" ? "CRL" : "OCSP"})</div>`;
}

/** A certificate's tags, as small labels (CONTRACT §16). */
function tagList(tags: string[] | undefined): Html | string {
  if (!tags || tags.length === 0) return "";
  return html`<ul class="tags" aria-label="Tags">${tags.map((tag) => html`<li class="badge tag">${tag}</li>`)}</ul>`;
}

/** "muted until …" while the certificate's events are delivered nowhere. */
function muted(mutedUntil: string | null | undefined): Html | string {
  if (!mutedUntil || Date.parse(mutedUntil) <= Date.now()) return "";
  return html`<div class="small"><span class="badge state-off">muted</span> until ${when(mutedUntil)}</div>`;
}

function addForm(me: SignedIn, mode: Mode, form: DashboardView["form"] = {}): Html {
  return html`<form class="card" method="post" action="/dashboard/certificates" aria-labelledby="add-certificate-heading">
<h2 id="add-certificate-heading">Add a certificate (${mode})</h2>
${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<div class="row">
<div><label for="cert-domain">Domain</label><input id="cert-domain" name="domain" type="text" required placeholder="example.com" value="${form.domain ?? ""}"
autocapitalize="off" spellcheck="false"></div>
<div><label for="cert-port">Port <span class="muted">(optional)</span></label><input id="cert-port" name="port" type="text" inputmode="numeric" placeholder="443" value="${form.port ?? ""}"></div>
<div><label for="cert-name">Name <span class="muted">(optional)</span></label><input id="cert-name" name="name" type="text" maxlength="100" value="${form.name ?? ""}"></div>
</div>
<p class="muted small">certkeeper connects to the domain at once to retrieve its certificate.</p>
<button type="submit">Add certificate</button>
</form>`;
}

export function removeCertificatePage(me: SignedIn, mode: Mode, certificate: CertificateView): Html {
  return page(
    { title: "Remove certificate", me, tab: "dashboard" },
    html`<h1>Stop monitoring ${certificate.domain}:${certificate.port}?</h1>
<section class="card">
<p>“${certificate.name}” (${mode}) will no longer be checked, and its pending notifications are cancelled.</p>
<form method="post" action="/dashboard/certificates/${certificate.id}/remove">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit" class="danger">Remove certificate</button> <a class="button secondary" href="/?mode=${mode}">Cancel</a></form>
</section>`,
  );
}
