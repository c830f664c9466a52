/**
 * The dashboard: whether alerts can go anywhere (banners), counts per status, the chart of expiries
 * per week, the certificates with problems first (found by domain, status and tag, a page at a time),
 * and the form to add one.
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import { type AlertRoutes, type ConsoleDashboard, LIST_TAKES_RENEWAL, LIST_TAKES_TAGS, TAKES_ALERT_POLICY } from "../../../core/workspace/mod.ts";
import { CERTIFICATE_STATUSES, PROTOCOLS, relativeDays, type Mode } from "../../../core/base/mod.ts";
import type { CertificateView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { ago, formToken, page, when } from "../layout.ts";
import { expiryChart } from "./expiry_chart.ts";

export interface DashboardFilters {
  domain?: string;
  status?: string;
  tag?: string;
  /** Renewal states (overdue, requested, not_due), a comma list. */
  renewal?: string;
  cursor?: string;
}

/** The renewal states the dashboard counts and filters by, as people say them. */
const RENEWAL_LABELS: Array<[string, string]> = [
  ["overdue", "renewal overdue"],
  ["requested", "renewal requested"],
];

/** What the add form held when the API refused it. */
export type CertificateFormInput = Partial<Record<"domain" | "port" | "name" | "tags" | "protocol" | "connectTo" | "alertThresholds" | "alertPolicy", string>>;

export interface DashboardView {
  me: SignedIn;
  mode: Mode;
  data: ConsoleDashboard;
  filters: DashboardFilters;
  notice?: string | null;
  error?: string | null;
  form?: CertificateFormInput;
}

/** A dashboard address keeping the mode and the filters, with `changes` applied (undefined drops one). */
export function dashboardHref(mode: Mode, filters: DashboardFilters, changes: Partial<Record<keyof DashboardFilters, string | undefined>> = {}): string {
  const params = new URLSearchParams({ mode });
  const merged = { ...filters, ...changes };
  for (const key of ["domain", "status", "tag", "renewal", "cursor"] as const) if (merged[key]) params.set(key, merged[key]!);
  return `/?${params}`;
}

export function dashboardPage(view: DashboardView): Html {
  const { me, mode, data, filters } = view;
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, label: string) => html`<a href="/?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${label}</a>`;
  const filtered = Boolean(filters.domain || filters.status || filters.tag || filters.renewal);
  return page(
    { title: "Dashboard", me, tab: "dashboard", mode, notice: view.notice, error: view.error },
    html`<h1>Dashboard</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
${alertBanners(data.alerts, mode, write)}
<section aria-labelledby="counts-heading">
<h2 id="counts-heading">${data.summary.total} certificate${data.summary.total === 1 ? "" : "s"} (${mode})</h2>
<ul class="counts">${CERTIFICATE_STATUSES.map((status) => {
      const count = data.summary.byStatus[status] ?? 0;
      const current = filters.status === status;
      return html`<li><a class="count status-${status}" href="${dashboardHref(mode, {}, { status })}" data-status="${status}"${current ? html` aria-current="true"` : ""}>
<span class="n">${count}</span> ${status}</a></li>`;
    })}${renewalCounts(view)}</ul>
</section>
${expiryChart(data.summary.expiringPerWeek, mode)}
<h2 id="certificates-heading">Certificates, problems first</h2>
${filterForm(mode, filters)}
${
  data.certificates.length === 0
    ? html`<p id="no-certificates">${filtered ? "No certificate matches these filters." : `No certificates are monitored in ${mode} mode yet.`}</p>`
    : html`<div class="table-wrap"><table class="stack" aria-labelledby="certificates-heading" id="certificates">
<thead><tr><th scope="col">Status</th><th scope="col">Certificate</th><th scope="col">Expires</th>
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

/**
 * The two banners of CONTRACT §23: no enabled channel (alerts go nowhere), and channels whose
 * deliveries fail, each named with since when and why.
 */
export function alertBanners(alerts: AlertRoutes, mode: Mode, write: boolean): Html {
  const none =
    alerts.enabled === 0
      ? html`<div class="banner warning" role="region" aria-label="Alerts go nowhere" id="banner-no-channel"><p><strong>Alerts go nowhere:</strong> no notification channel is
${alerts.channels === 0 ? "set up" : "enabled"} for the ${mode} data, so nobody hears when a certificate expires, breaks or stops answering.</p>
<p>${write ? html`<a href="/channels?mode=${mode}#add-channel">Add a channel</a> (email, Slack, Teams, PagerDuty, …) and send it a test.` : "Ask an owner or admin to add a channel."}</p></div>`
      : "";
  const failing =
    alerts.failing.length > 0
      ? html`<div class="banner error" role="region" aria-label="Failing channels" id="banner-failing"><p><strong>${alerts.failing.length === 1 ? "A channel is failing" : `${alerts.failing.length} channels are failing`}:</strong>
alerts sent to ${alerts.failing.length === 1 ? "it do" : "them do"} not arrive.</p>
<ul>${alerts.failing.map(
          (channel) =>
            html`<li><strong>${channel.name}</strong> (${channel.type}), failing since ${when(channel.health.failingSince)} (${ago(channel.health.failingSince)})${
              channel.health.lastError ? html`: ${channel.health.lastError}` : ""
            }</li>`,
        )}</ul>
<p><a href="/channels?mode=${mode}">See the channels</a>, fix the receiver, then send a test.</p></div>`
      : "";
  return html`${none}${failing}`;
}

/** The renewal counts (CONTRACT §18): certificates whose renewal is overdue, or requested by their CA. */
function renewalCounts(view: DashboardView): Html | string {
  const byRenewal = (view.data.summary as { byRenewal?: Record<string, number> }).byRenewal;
  if (!byRenewal || !LIST_TAKES_RENEWAL) return "";
  return html`${RENEWAL_LABELS.map(([state, label]) => {
    const current = view.filters.renewal === state;
    return html`<li><a class="count status-expiring" href="${dashboardHref(view.mode, {}, { renewal: state })}" data-renewal="${state}"${current ? html` aria-current="true"` : ""}>
<span class="n">${byRenewal[state] ?? 0}</span> ${label}</a></li>`;
  })}`;
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
${
  LIST_TAKES_RENEWAL
    ? html`<div><label for="filter-renewal">Renewal</label><select id="filter-renewal" name="renewal"><option value="">Any</option>${[
        ["overdue", "overdue"],
        ["requested", "requested by the CA"],
        ["not_due", "not due"],
      ].map(([state, label]) => html`<option value="${state}"${filters.renewal === state ? html` selected` : ""}>${label}</option>`)}</select></div>`
    : ""
}
</div>
<button type="submit">Find</button> ${filtered(filters) ? html`<a class="button secondary" href="/?mode=${mode}">Clear</a>` : ""}
</form>`;
}

function filtered(filters: DashboardFilters): boolean {
  return Boolean(filters.domain || filters.status || filters.tag || filters.renewal);
}

/** "renewal overdue" under the status when the renewal is news the status does not already say (the days policy). */
function renewalNote(c: CertificateView): Html | string {
  const state = (c as { renewal?: { state?: string } | null }).renewal?.state;
  if ((state !== "overdue" && state !== "requested") || c.statusReason?.startsWith("renewal_")) return "";
  return html`<div class="muted small">renewal ${state}</div>`;
}

/** "renew by 2027-01-14 08:00 UTC": the renewal deadline (CONTRACT §18), "was due" once it has passed. */
function renewalDeadline(c: CertificateView): Html | string {
  const renewal = (c as { renewal?: { deadline?: string; state?: string } | null }).renewal;
  if (!renewal?.deadline) return "";
  return html`<div class="muted small" data-renewal-deadline="${renewal.deadline}">${renewal.state === "overdue" ? "renewal was due" : "renew by"} ${when(renewal.deadline)}</div>`;
}

/** "not deployed: 1 of 3 addresses" when a newer issuance is not yet served everywhere (CONTRACT §20). */
function deploymentNote(c: CertificateView): Html | string {
  const deployment = (c as { deployment?: { servedBy: number; endpoints: number } | null }).deployment;
  if (!deployment) return "";
  return html`<div class="small badge-note" data-deployment="pending">not deployed: ${deployment.servedBy} of ${deployment.endpoints} addresses</div>`;
}

function certificateRow(c: CertificateView, mode: Mode, write: boolean): Html {
  return html`<tr data-certificate-id="${c.id}" data-status="${c.status}">
<td data-label="Status"><span class="badge status-${c.status}">${c.status}</span>${
    c.statusReason && c.statusReason !== c.status ? html`<div class="muted small">${c.statusReason.replace(/_/g, " ")}</div>` : ""
  }${renewalNote(c)}${deploymentNote(c)}${revocationNote(c)}</td>
<td data-label="Certificate"><a href="/certificates/${c.id}?mode=${mode}"><strong>${c.name}</strong></a>${
    c.name !== c.domain || c.port !== 443 ? html`<div class="mono small">${c.domain}:${c.port}</div>` : ""
  }${tagList(c.tags)}${muted(c.mutedUntil)}</td>
<td data-label="Expires" data-days="${c.daysUntilExpiry}">${relativeDays(c.daysUntilExpiry)}<div class="muted small">${when(c.expiresAt)}</div>${renewalDeadline(c)}</td>
<td data-label="Issuer">${c.issuer}</td><td data-label="Last check">${ago(c.lastCheckedAt)}</td>
${
  write
    ? html`<td class="actions"><a href="/certificates/${c.id}?mode=${mode}#edit">Edit<span class="visually-hidden"> ${c.domain}</span></a>
<a href="/dashboard/certificates/${c.id}/remove?mode=${mode}">Remove<span class="visually-hidden"> ${c.domain}</span></a></td>`
    : ""
}
</tr>`;
}

/** When and why a revoked certificate was revoked; nothing for any other. */
function revocationNote(c: CertificateView): Html | string {
  const r = c.revocation;
  if (r?.status !== "revoked") return "";
  return html`<div class="muted small">${r.reason ? `${r.reason}, ` : ""}${r.revokedAt ? html`since ${when(r.revokedAt)}` : "by its CA"} (${r.source === "crl" ? "CRL" : "OCSP"})</div>`;
}

/** A certificate's tags, as small labels (CONTRACT §16). */
export function tagList(tags: string[] | undefined): Html | string {
  if (!tags || tags.length === 0) return "";
  return html`<ul class="tags" aria-label="Tags">${tags.map((tag) => html`<li class="badge tag">${tag}</li>`)}</ul>`;
}

/** "muted until …" while the certificate's events are delivered nowhere. */
export function muted(mutedUntil: string | null | undefined): Html | string {
  if (!mutedUntil || Date.parse(mutedUntil) <= Date.now()) return "";
  return html`<div class="small"><span class="badge state-off">muted</span> until ${when(mutedUntil)}</div>`;
}

function addForm(me: SignedIn, mode: Mode, form: CertificateFormInput = {}): Html {
  const protocol = form.protocol || "tls";
  return html`<form class="card" method="post" action="/dashboard/certificates" aria-labelledby="add-certificate-heading" id="add-certificate">
<h2 id="add-certificate-heading">Add a certificate (${mode})</h2>
${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<div class="row">
<div><label for="cert-domain">Domain</label><input id="cert-domain" name="domain" type="text" required placeholder="example.com" value="${form.domain ?? ""}"
autocapitalize="off" spellcheck="false"></div>
<div><label for="cert-port">Port <span class="muted">(optional)</span></label><input id="cert-port" name="port" type="text" inputmode="numeric" placeholder="443" value="${form.port ?? ""}"></div>
<div><label for="cert-name">Name <span class="muted">(optional)</span></label><input id="cert-name" name="name" type="text" maxlength="100" value="${form.name ?? ""}"></div>
<div><label for="cert-tags">Tags <span class="muted">(optional)</span></label><input id="cert-tags" name="tags" type="text" value="${form.tags ?? ""}"
autocapitalize="off" spellcheck="false" placeholder="team:web, env:prod" aria-describedby="cert-tags-hint"><p id="cert-tags-hint" class="hint">Commas between tags; lower case, digits and - _ . : /</p></div>
</div>
<details class="more"${form.protocol || form.connectTo || form.alertThresholds || form.alertPolicy ? html` open` : ""}><summary>More options</summary>
<div class="row">
<div><label for="cert-protocol">Protocol</label><select id="cert-protocol" name="protocol">${PROTOCOLS.map(
    (p) => html`<option value="${p}"${p === protocol ? html` selected` : ""}>${p === "tls" ? "TLS (HTTPS and any TLS port)" : `${p} (STARTTLS)`}</option>`,
  )}</select></div>
<div><label for="cert-connect-to">Connect to <span class="muted">(optional)</span></label><input id="cert-connect-to" name="connectTo" type="text" value="${form.connectTo ?? ""}"
autocapitalize="off" spellcheck="false" placeholder="10.0.0.5" aria-describedby="cert-connect-to-hint"><p id="cert-connect-to-hint" class="hint">A host name or IP address to connect to instead of the domain (one node behind a load balancer).</p></div>
<div><label for="cert-thresholds">Alert thresholds <span class="muted">(days)</span></label><input id="cert-thresholds" name="alertThresholds" type="text" value="${form.alertThresholds ?? ""}"
placeholder="30, 14, 7, 3, 1" inputmode="numeric"></div>
${TAKES_ALERT_POLICY ? alertPolicySelect("cert-alert-policy", form.alertPolicy ?? "", true) : ""}
</div>
</details>
<p class="muted small">certkeeper connects to the domain at once to retrieve its certificate.</p>
<button type="submit">Add certificate</button>
</form>`;
}

/** The alert policy (CONTRACT §18): at the renewal deadline, or at fixed days before expiry. */
export function alertPolicySelect(id: string, current: string, withDefault: boolean): Html {
  const options: Array<[string, string]> = [
    ...(withDefault ? ([["", "The server's default"]] as Array<[string, string]>) : []),
    ["renewal", "When a renewal is overdue (renewal)"],
    ["days", "At fixed days before expiry (days)"],
  ];
  return html`<div><label for="${id}">Alert policy</label><select id="${id}" name="alertPolicy">${options.map(
    ([value, label]) => html`<option value="${value}"${value === current ? html` selected` : ""}>${label}</option>`,
  )}</select></div>`;
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
