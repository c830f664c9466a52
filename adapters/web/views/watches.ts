/**
 * The Watches tab (CONTRACT §15): the mode's Certificate Transparency watches, each with Poll now,
 * Edit and Remove, and the form to add one.
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { Mode } from "../../../core/base/mod.ts";
import { html, type Html } from "../html.ts";
import { ago, formToken, page } from "../layout.ts";

export interface WatchesView {
  me: SignedIn;
  mode: Mode;
  watches: Array<Record<string, unknown>>;
  notice?: string | null;
  error?: string | null;
  /** What the add form held when the API refused it. */
  form?: Record<string, string>;
}

export function watchesPage(view: WatchesView): Html {
  const { me, mode } = view;
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, text: string) => html`<a href="/watches?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${text}</a>`;
  const rows = view.watches;
  return page(
    { title: "Watches", me, tab: "watches", mode, notice: view.notice, error: view.error },
    html`<h1>Certificate Transparency watches</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
<p class="muted">Each watch looks for new certificates issued for a domain, and alerts when one appears.${
      write ? " “Poll now” asks the Certificate Transparency service at once: its answer shows as the last poll and last error." : ""
    }</p>
${
  rows.length === 0
    ? html`<p>No watches in ${mode} mode yet.</p>`
    : html`<div class="table-wrap"><table class="stack" id="watches"><caption class="visually-hidden">Watches (${mode})</caption>
<thead><tr><th scope="col">Domain</th><th scope="col">Subdomains</th><th scope="col">Adds what it finds</th><th scope="col">Issuances seen</th>
<th scope="col">Last poll</th><th scope="col">Last error</th>${write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead>
<tbody>${rows.map(
        (w) => html`<tr data-watch-id="${String(w.id)}"><td data-label="Domain">${String(w.domain)}</td><td data-label="Subdomains">${w.includeSubdomains ? "yes" : "no"}</td><td data-label="Adds what it finds">${
          w.autoMonitor ? "yes" : "no"
        }</td>
<td data-label="Issuances seen" class="num">${String(w.issuancesSeen ?? 0)}</td><td data-label="Last poll">${ago(typeof w.lastPolledAt === "string" ? w.lastPolledAt : null)}</td><td data-label="Last error">${
          typeof w.lastError === "string" ? w.lastError : "—"
        }</td>${
          write
            ? html`<td class="actions"><form method="post" action="/watches/${String(w.id)}/poll">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Poll now<span class="visually-hidden"> ${String(w.domain)}</span></button></form>
<a href="/watches/${String(w.id)}/edit?mode=${mode}">Edit<span class="visually-hidden"> ${String(w.domain)}</span></a>
<a href="/watches/${String(w.id)}/remove?mode=${mode}">Remove<span class="visually-hidden"> ${String(w.domain)}</span></a></td>`
            : ""
        }</tr>`,
      )}</tbody></table></div>`
}
${write ? addWatchForm(me, mode, view.form) : ""}`,
  );
}

/** One issuer per line: an issuer's name may hold a comma ("GoDaddy.com, Inc."), never a line break. */
function issuersText(watch: Record<string, unknown> | undefined): string {
  return Array.isArray(watch?.allowedIssuers) ? (watch.allowedIssuers as string[]).join("\n") : "";
}

/** The fields a watch's add and edit forms share. */
function watchFields(form: Record<string, string> | undefined, watch: Record<string, unknown> | undefined, prefix: string): Html {
  const checked = (name: string, fallback: boolean) => ((form ? form[name] === "1" : fallback) ? html` checked` : "");
  return html`<fieldset><legend>What it does</legend>
<label><input type="checkbox" name="includeSubdomains" value="1"${checked("includeSubdomains", watch ? Boolean(watch.includeSubdomains) : true)}> Subdomains too</label>
<label><input type="checkbox" name="autoMonitor" value="1"${checked("autoMonitor", Boolean(watch?.autoMonitor))}> Monitor the names it finds</label>
</fieldset>
<label for="${prefix}-issuers">Allowed issuers <span class="muted">(optional)</span></label>
<textarea id="${prefix}-issuers" name="allowedIssuers" rows="3" spellcheck="false" aria-describedby="${prefix}-issuers-hint">${form?.allowedIssuers ?? issuersText(watch)}</textarea>
<p id="${prefix}-issuers-hint" class="hint">One name per line (such as Let's Encrypt, or GoDaddy.com, Inc.); an alert then says whether the issuer is one of them.</p>`;
}

function addWatchForm(me: SignedIn, mode: Mode, form?: Record<string, string>): Html {
  return html`<form class="card" method="post" action="/watches" id="add-watch" aria-labelledby="add-watch-heading">
<h2 id="add-watch-heading">Add a watch (${mode})</h2>
${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<label for="watch-domain">Domain</label><input id="watch-domain" name="domain" type="text" required autocapitalize="off" spellcheck="false" placeholder="example.com" value="${form?.domain ?? ""}">
${watchFields(form, undefined, "watch")}
<button type="submit">Add watch</button>
</form>`;
}

export function watchFormPage(view: { me: SignedIn; mode: Mode; watch: Record<string, unknown>; form?: Record<string, string>; error?: string | null }): Html {
  const { me, mode, watch } = view;
  return page(
    { title: `Edit the watch of ${String(watch.domain)}`, me, tab: "watches", error: view.error },
    html`<p><a href="/watches?mode=${mode}">← Watches (${mode})</a></p>
<h1>Edit the watch of ${String(watch.domain)}</h1>
<form class="card" method="post" action="/watches/${String(watch.id)}/edit">
${formToken(me)}<input type="hidden" name="mode" value="${mode}">
${watchFields(view.form, watch, "edit-watch")}
<button type="submit">Save watch</button> <a class="button secondary" href="/watches?mode=${mode}">Cancel</a>
</form>`,
  );
}

export function removeWatchPage(me: SignedIn, mode: Mode, watch: Record<string, unknown>): Html {
  return page(
    { title: "Remove watch", me, tab: "watches" },
    html`<h1>Stop watching ${String(watch.domain)}?</h1>
<section class="card">
<p>New certificates issued for ${String(watch.domain)} will no longer be looked for (${mode}).</p>
<form method="post" action="/watches/${String(watch.id)}/remove">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit" class="danger">Remove watch</button> <a class="button secondary" href="/watches?mode=${mode}">Cancel</a></form>
</section>`,
  );
}
