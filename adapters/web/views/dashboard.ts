/** The dashboard: certificates by days until expiry, channels, add and remove a certificate. */
import { type Overview, type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { Mode } from "../../../core/base/mod.ts";
import type { CertificateView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

export interface DashboardView {
  me: SignedIn;
  mode: Mode;
  overview: Overview;
  notice?: string | null;
  error?: string | null;
  form?: { domain?: string; port?: string; name?: string };
}

const STATUS_TEXT: Record<string, string> = {
  valid: "valid",
  expiring: "expiring",
  expired: "expired",
  revoked: "revoked",
  invalid: "invalid",
  unreachable: "unreachable",
};

export function dashboardPage(view: DashboardView): Html {
  const { me, mode, overview } = view;
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, label: string) => html`<a href="/?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${label}</a>`;
  return page(
    { title: "Dashboard", me, tab: "dashboard", notice: view.notice, error: view.error },
    html`<h1>Dashboard</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
<h2 id="certificates-heading">Certificates (${mode})</h2>
${
  overview.certificates.length === 0
    ? html`<p>No certificates are monitored in ${mode} mode yet.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="certificates-heading">
<thead><tr><th scope="col">Status</th><th scope="col">Certificate</th><th scope="col">Days left</th><th scope="col">Expires</th>
<th scope="col">Issuer</th><th scope="col">Last check</th>${write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead>
<tbody>${overview.certificates.map((certificate) => certificateRow(certificate, mode, write))}</tbody></table></div>`
}
${overview.truncated ? html`<p class="muted small">Only the first certificates and channels are shown; the API lists them all.</p>` : ""}
${write ? addForm(me, mode, view.form) : ""}
<h2 id="channels-heading">Notification channels (${mode})</h2>
${
  overview.channels.length === 0
    ? html`<p>No channels yet: add them with <code>POST /v1/channels</code>.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="channels-heading"><thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">State</th></tr></thead>
<tbody>${overview.channels.map(
        (channel) => html`<tr><td>${channel.name}</td><td>${channel.type}</td><td>${
          channel.enabled ? html`<span class="badge state-active">enabled</span>` : html`<span class="badge state-off">disabled</span>`
        }</td></tr>`,
      )}</tbody></table></div>`
}`,
  );
}

function certificateRow(c: CertificateView, mode: Mode, write: boolean): Html {
  const days = c.daysUntilExpiry;
  return html`<tr data-certificate-id="${c.id}">
<td><span class="badge status-${c.status}">${STATUS_TEXT[c.status] ?? c.status}</span>${
    c.statusReason && c.statusReason !== c.status ? html`<div class="muted small">${c.statusReason.replace(/_/g, " ")}</div>` : ""
  }${revocationNote(c)}</td>
<td><strong>${c.name}</strong>${c.name !== c.domain || c.port !== 443 ? html`<div class="mono small">${c.domain}:${c.port}</div>` : ""}${tagList(c.tags)}${muted(c.mutedUntil)}</td>
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
