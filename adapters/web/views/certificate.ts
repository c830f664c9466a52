/**
 * A certificate's page: one plain sentence of what is wrong and what to do, then what matters in
 * words and human times (expiry, issuer, names, last check, revocation, renewal), the actions (Check
 * now, edit: name, thresholds, tags, mute, connect-to, alert policy; remove), its endpoints and chain,
 * its recent events, and every field the API gives for those who want them.
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import { type CertificateDetail, TAKES_ALERT_POLICY } from "../../../core/workspace/mod.ts";
import { explainCertificate } from "../../../core/certificates/mod.ts";
import { nameShown, relativeDays, type EventType, type Mode } from "../../../core/base/mod.ts";
import { eventSummary } from "../../../core/notify/mod.ts";
import type { CertificateView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { ago, formToken, moment, page, when } from "../layout.ts";
import { MUTE_CHOICES } from "../forms.ts";
import { alertPolicySelect, muted, tagList } from "./dashboard.ts";

/** Fields shown elsewhere on the page (the heading, the tables). */
const OWN_SECTIONS = new Set(["chain", "endpoints"]);

export interface CertificatePageView {
  me: SignedIn;
  mode: Mode;
  detail: CertificateDetail;
  notice?: string | null;
  /** A refusal of the edit form, shown beside it with what was typed. */
  error?: string | null;
  form?: Record<string, string>;
}

export function certificatePage(view: CertificatePageView): Html {
  const { me, mode, detail } = view;
  const c = detail.certificate as CertificateView & Record<string, unknown>;
  const write = mayWrite(me.user.role);
  return page(
    { title: c.domain, me, tab: "dashboard", mode, notice: view.notice },
    html`<p><a href="/?mode=${mode}">← Dashboard (${mode})</a></p>
<h1>${c.name} <span class="badge status-${c.status}">${c.status}</span></h1>
<p class="verdict" id="verdict" data-status="${c.status}">${explainCertificate(c)}</p>
<p class="mono">${c.domain}:${c.port}${c.protocol && c.protocol !== "tls" ? ` · ${c.protocol}` : ""}${c.connectTo ? ` · connects to ${c.connectTo}` : ""}</p>
${
  write
    ? html`<div class="actions"><form method="post" action="/certificates/${c.id}/check">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Check now</button></form>
<a class="button secondary" href="#edit">Edit</a>
<a class="button secondary" href="/dashboard/certificates/${c.id}/remove?mode=${mode}">Remove</a></div>`
    : ""
}
<section class="card" aria-labelledby="summary-heading">
<h2 id="summary-heading">In short</h2>
<dl class="fields" id="summary">${summary(c)}</dl>
</section>
${write ? editForm(me, mode, c, view) : ""}
${Array.isArray(c.endpoints) && c.endpoints.length > 0 ? html`<h2 id="endpoints-heading">Addresses</h2>${endpointTable(c)}` : ""}
<h2 id="chain-heading">Chain sent by the server</h2>
${Array.isArray(c.chain) && c.chain.length > 0 ? chainTable(c) : html`<p>No chain was retrieved.</p>`}
<h2 id="events-heading">Recent events</h2>
${
  detail.events.length === 0
    ? html`<p>No recent events for this certificate.</p>`
    : html`<div class="table-wrap"><table class="stack" aria-labelledby="events-heading" id="events"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Details</th><th scope="col">Deliveries</th></tr></thead>
<tbody>${detail.events.map(
        (event) =>
          html`<tr><td data-label="When">${ago(event.createdAt)} <span class="muted small">(${when(event.createdAt)})</span></td><td data-label="Event"><code>${event.type}</code></td><td data-label="Details">${eventDetails(event, c)}</td><td data-label="Deliveries">${deliveries(
            event.deliveries,
          )}</td></tr>`,
      )}</tbody></table></div>`
}
<details class="more" id="all-fields"><summary>Every field, as the API gives it</summary>
<dl class="fields">${Object.entries(c)
      .filter(([key]) => !OWN_SECTIONS.has(key))
      .map(([key, value]) => html`<dt>${label(key)}</dt><dd${typeof value === "string" && value.length > 40 ? html` class="mono"` : ""}>${show(value)}</dd>`)}</dl>
</details>`,
  );
}

/** What matters, in words: expiry, issue, issuer, names, last check, thresholds, tags, mute, revocation, renewal, key, warnings. */
function summary(c: CertificateView & Record<string, unknown>): Html {
  const row = (name: string, value: Html | string) => html`<dt>${name}</dt><dd>${value}</dd>`;
  const renewal = c.renewal as { deadline?: string | null; state?: string; source?: string } | null | undefined;
  const deployment = c.deployment as { issuedAt: string; issuer: string; servedBy: number; endpoints: number } | null | undefined;
  const revocation = c.revocation;
  return html`${row("Expires", html`${relativeDays(c.daysUntilExpiry)} <span class="muted small">(${when(c.expiresAt)})</span>`)}
${row("Issued", moment(c.issuedAt))}
${row("Issuer", c.issuer)}
${row("Covers", c.subjectAlternativeNames.length > 0 ? c.subjectAlternativeNames.join(", ") : c.subject)}
${row("Last checked", moment(c.lastCheckedAt))}
${row("Alerts", c.alertThresholds.length > 0 ? `${c.alertThresholds.join(", ")} days before expiry` : "no alerts by days left")}
${typeof c.alertPolicy === "string" ? row("Alert policy", c.alertPolicy === "renewal" ? "when a renewal is overdue" : "at fixed days before expiry") : ""}
${renewal?.deadline ? row("Renewal", renewalText(renewal.state, renewal.deadline)) : ""}
${deployment ? row("Not deployed yet", html`a certificate issued ${moment(deployment.issuedAt)} by ${nameShown(deployment.issuer)} is served by ${deployment.servedBy} of ${deployment.endpoints} addresses`) : ""}
${row("Tags", c.tags.length > 0 ? tagList(c.tags) : "none")}
${row("Notifications", muted(c.mutedUntil) || "sent (not muted)")}
${row(
  "Revocation",
  revocation.status === "not_checked"
    ? "not checked"
    : html`${revocation.status}${revocation.source ? ` (${revocation.source === "crl" ? "CRL" : "OCSP"})` : ""}${revocation.checkedAt ? html`, asked ${ago(revocation.checkedAt)}` : ""}`,
)}
${c.publicKey ? row("Key", `${c.publicKey.algorithm} ${c.publicKey.curve ?? `${c.publicKey.size} bits`}`) : ""}
${c.tls ? row("Connection", `${c.tls.protocol}, ${c.tls.cipher}`) : ""}
${c.warnings.length > 0 ? row("Warnings", c.warnings.map((w) => w.replace(/_/g, " ")).join(", ")) : ""}`;
}

/** "due in 20 days (…)", "overdue: it was due 2 days ago (…)", "requested early by its CA: due …". */
function renewalText(state: string | undefined, deadline: string): Html {
  if (state === "overdue") return html`overdue: it was due ${moment(deadline)}`;
  if (state === "requested") return html`requested early by its certificate authority: due ${moment(deadline)}`;
  return html`due ${moment(deadline)}`;
}

function editForm(me: SignedIn, mode: Mode, c: CertificateView & Record<string, unknown>, view: CertificatePageView): Html {
  const form = view.form ?? {};
  const value = (name: string, fallback: string) => (name in form ? form[name]! : fallback);
  const mutedNow = c.mutedUntil && Date.parse(c.mutedUntil) > Date.now();
  // What the fields show when the form is opened (kept through a refusal): only those changed are saved.
  const shownFields: Array<[string, string]> = [
    ["name", c.name],
    ["alertThresholds", c.alertThresholds.join(", ")],
    ["tags", c.tags.join(", ")],
    ["connectTo", c.connectTo ?? ""],
    ...(TAKES_ALERT_POLICY ? ([["alertPolicy", typeof c.alertPolicy === "string" ? c.alertPolicy : ""]] as Array<[string, string]>) : []),
  ];
  return html`<form class="card" method="post" action="/certificates/${c.id}/edit" id="edit" aria-labelledby="edit-heading">
<h2 id="edit-heading">Edit</h2>
${view.error ? html`<div class="error" role="alert">${view.error}</div>` : ""}
${formToken(me)}<input type="hidden" name="mode" value="${mode}">
${shownFields.map(([name, shown]) => html`<input type="hidden" name="was.${name}" value="${value(`was.${name}`, shown)}">`)}
<div class="row">
<div><label for="edit-name">Name</label><input id="edit-name" name="name" type="text" maxlength="100" required value="${value("name", c.name)}"></div>
<div><label for="edit-thresholds">Alert thresholds <span class="muted">(days before expiry)</span></label><input id="edit-thresholds" name="alertThresholds" type="text"
inputmode="numeric" value="${value("alertThresholds", c.alertThresholds.join(", "))}" aria-describedby="edit-thresholds-hint"><p id="edit-thresholds-hint" class="hint">Commas between days; empty: no alerts by days left.</p></div>
<div><label for="edit-tags">Tags</label><input id="edit-tags" name="tags" type="text" autocapitalize="off" spellcheck="false" value="${value("tags", c.tags.join(", "))}"></div>
<div><label for="edit-mute">Notifications</label><select id="edit-mute" name="mute" aria-describedby="edit-mute-hint">${MUTE_CHOICES.map(
    ([choice, text]) => html`<option value="${choice}"${choice === (form.mute ?? "") ? html` selected` : ""}>${text}</option>`,
  )}</select><p id="edit-mute-hint" class="hint">${mutedNow ? `Muted until ${when(c.mutedUntil)}.` : "Now sent."} Muted, its events are recorded but delivered nowhere.</p></div>
<div><label for="edit-connect-to">Connect to</label><input id="edit-connect-to" name="connectTo" type="text" autocapitalize="off" spellcheck="false"
value="${value("connectTo", c.connectTo ?? "")}" aria-describedby="edit-connect-to-hint"><p id="edit-connect-to-hint" class="hint">Empty: the domain's own addresses.</p></div>
${TAKES_ALERT_POLICY ? alertPolicySelect("edit-alert-policy", value("alertPolicy", typeof c.alertPolicy === "string" ? c.alertPolicy : ""), false) : ""}
</div>
<button type="submit">Save changes</button>
</form>`;
}

function endpointTable(c: CertificateView): Html {
  // DANE (smtp): a column of its own once any address has a TLSA verdict, each address's own.
  const dane = c.endpoints.some((e) => e.dane);
  return html`<div class="table-wrap"><table class="stack" aria-labelledby="endpoints-heading" id="endpoints"><thead><tr><th scope="col">Address</th><th scope="col">Status</th>
<th scope="col">Expires</th><th scope="col">Serial number</th>${dane ? html`<th scope="col">DANE</th>` : ""}</tr></thead>
<tbody>${c.endpoints.map(
    (e) => html`<tr><td data-label="Address" class="mono">${e.address}</td><td data-label="Status"><span class="badge status-${e.status}">${e.status}</span>${
      e.statusReason ? html` <span class="muted small">${e.statusReason.replace(/_/g, " ")}</span>` : ""
    }</td><td data-label="Expires">${e.expiresAt ? when(e.expiresAt) : "—"}</td><td data-label="Serial number" class="mono small">${e.serialNumber ?? "—"}</td>${
      dane ? html`<td data-label="DANE">${e.dane ? daneShown(e.dane) : "—"}</td>` : ""
    }</tr>`,
  )}</tbody></table></div>`;
}

/** An address's DANE verdict in words, and whether the resolver vouched for the answer with DNSSEC. */
function daneShown(dane: NonNullable<CertificateView["endpoints"][number]["dane"]>): string {
  const verdict = dane.status === "match" ? "matches a TLSA record" : dane.status === "mismatch" ? "mismatch: no TLSA record matches" : "no TLSA record";
  return dane.status === "none" ? verdict : `${verdict} (${dane.validated ? "DNSSEC-validated" : "not DNSSEC-validated"})`;
}

function chainTable(c: CertificateView): Html {
  return html`<div class="table-wrap"><table class="stack" aria-labelledby="chain-heading" id="chain"><thead><tr><th scope="col">Subject</th><th scope="col">Issuer</th>
<th scope="col">Valid</th><th scope="col">Expires</th></tr></thead>
<tbody>${c.chain.map(
    (entry) => html`<tr><td data-label="Subject">${entry.subject}</td><td data-label="Issuer">${entry.issuer}</td><td data-label="Valid">${when(entry.validFrom)} to ${when(
      entry.validTo,
    )}</td><td data-label="Expires">${relativeDays(entry.daysUntilExpiry)}</td></tr>`,
  )}</tbody></table></div>`;
}

/** "daysUntilExpiry" → "Days until expiry". */
function label(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function show(value: unknown): Html | string {
  if (value === null || value === undefined) return "—";
  if (Array.isArray(value)) return value.length === 0 ? "none" : value.map((item) => (typeof item === "object" ? JSON.stringify(item) : String(item))).join(", ");
  if (typeof value === "object") {
    return html`<dl class="nested">${Object.entries(value as Record<string, unknown>).map(([k, v]) => html`<dt>${label(k)}</dt><dd>${show(v)}</dd>`)}</dl>`;
  }
  return String(value);
}

/**
 * An event's details in a few words: its threshold, error or previous serial; for the others (a renewal
 * overdue or requested, an issuance not deployed, a renewal CAA blocks…), the sentence its
 * notifications carry, naming the addresses, deadlines and windows.
 */
function eventDetails(event: CertificateDetail["events"][number], c: CertificateView): string {
  const data = event.data;
  if (!data || typeof data !== "object") return "";
  const d = data as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.threshold === "number") parts.push(`threshold ${d.threshold} days`);
  if (typeof d.error === "string") parts.push(d.error);
  if (d.previous && typeof d.previous === "object") parts.push(`previous serial ${(d.previous as Record<string, unknown>).serialNumber ?? "?"}`);
  if (parts.length === 0 && SAID_IN_WORDS.has(event.type)) {
    // The certificate as the event saw it, or as it is now when the event kept too little of it.
    const seen = d.certificate as Partial<CertificateView> | undefined;
    const certificate = typeof seen?.domain === "string" && typeof seen.port === "number" && typeof seen.expiresAt === "string" ? seen : c;
    parts.push(eventSummary({ type: event.type as EventType, data: { ...d, certificate }, createdAt: Date.parse(event.createdAt) }));
  }
  if (d.muted === true) parts.push("muted: delivered nowhere");
  return parts.join("; ");
}

/** The events whose data the few words above do not cover: their notifications' sentence instead. */
const SAID_IN_WORDS = new Set(["certificate.renewal_overdue", "certificate.renewal_requested", "certificate.not_deployed", "certificate.renewal_blocked", "certificate.issued"]);

function deliveries(list: CertificateDetail["events"][number]["deliveries"]): Html | string {
  if (list.length === 0) return "none";
  const count = (status: string) => list.filter((d) => d.status === status).length;
  const summary = [["delivered", count("delivered")], ["pending", count("pending")], ["failed", count("failed")]]
    .filter(([, n]) => (n as number) > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(", ");
  const errors = [...new Set(list.filter((d) => d.lastError).map((d) => d.lastError!))];
  return errors.length === 0 ? summary : html`${summary}<div class="muted small">${errors.join("; ")}</div>`;
}
