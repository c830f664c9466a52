/** The Watches tab (CONTRACT §15): the mode's Certificate Transparency watches, when the build has them. */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { Mode } from "../../../core/base/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

export function watchesPage(me: SignedIn, mode: Mode, watches: unknown[], notice?: string | null): Html {
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, text: string) => html`<a href="/watches?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${text}</a>`;
  const rows = watches as Array<Record<string, unknown>>;
  return page(
    { title: "Watches", me, tab: "watches", notice },
    html`<h1>Certificate Transparency watches</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
<p class="muted">Each watch looks for new certificates issued for a domain. Watches are added and changed through the API (<code>POST /v1/watches</code>).${
      write ? " “Poll now” asks the Certificate Transparency service at once: its answer shows as the last poll and last error." : ""
    }</p>
${
  rows.length === 0
    ? html`<p>No watches in ${mode} mode yet.</p>`
    : html`<div class="table-wrap"><table id="watches"><caption class="visually-hidden">Watches (${mode})</caption>
<thead><tr><th scope="col">Domain</th><th scope="col">Subdomains</th><th scope="col">Adds what it finds</th><th scope="col">Issuances seen</th>
<th scope="col">Last poll</th><th scope="col">Last error</th>${write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead>
<tbody>${rows.map(
        (w) => html`<tr data-watch-id="${String(w.id)}"><td>${String(w.domain)}</td><td>${w.includeSubdomains ? "yes" : "no"}</td><td>${w.autoMonitor ? "yes" : "no"}</td>
<td class="num">${String(w.issuancesSeen ?? 0)}</td><td>${when(typeof w.lastPolledAt === "string" ? w.lastPolledAt : null)}</td><td>${typeof w.lastError === "string" ? w.lastError : "—"}</td>${
          write
            ? html`<td><form method="post" action="/watches/${String(w.id)}/poll">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Poll now<span class="visually-hidden"> ${String(w.domain)}</span></button></form></td>`
            : ""
        }</tr>`,
      )}</tbody></table></div>`
}`,
  );
}
