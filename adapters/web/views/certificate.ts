/**
 * A certificate's page: every field the API gives (new fields appear without changes here), its
 * endpoints and chain as tables, its recent events, and "Check now" for those who may write.
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { CertificateDetail } from "../../../core/workspace/mod.ts";
import type { Mode } from "../../../core/base/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

/** Fields shown elsewhere on the page (the heading, the tables). */
const OWN_SECTIONS = new Set(["chain", "endpoints"]);

export function certificatePage(me: SignedIn, mode: Mode, detail: CertificateDetail, notice?: string | null): Html {
  const c = detail.certificate as unknown as Record<string, unknown> & { id: string; domain: string; port: number; name: string; status: string; statusReason: string | null };
  const write = mayWrite(me.user.role);
  const endpoints = c.endpoints;
  return page(
    { title: c.domain, me, tab: "dashboard", notice },
    html`<p><a href="/?mode=${mode}">← Dashboard (${mode})</a></p>
<h1>${c.name} <span class="badge status-${c.status}">${c.status}</span></h1>
<p class="mono">${c.domain}:${c.port}${c.statusReason ? html` · ${c.statusReason.replace(/_/g, " ")}` : ""}</p>
${
  write
    ? html`<form method="post" action="/certificates/${c.id}/check">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Check now</button></form>`
    : ""
}
<section class="card" aria-labelledby="fields-heading">
<h2 id="fields-heading">Every field</h2>
<dl class="fields">${Object.entries(c)
      .filter(([key]) => !OWN_SECTIONS.has(key))
      .map(([key, value]) => html`<dt>${label(key)}</dt><dd${typeof value === "string" && value.length > 40 ? html` class="mono"` : ""}>${show(value)}</dd>`)}</dl>
</section>
${Array.isArray(endpoints) ? html`<h2 id="endpoints-heading">Endpoints</h2>${objectTable("endpoints-heading", endpoints)}` : ""}
<h2 id="chain-heading">Chain sent by the server</h2>
${Array.isArray(c.chain) && c.chain.length > 0 ? objectTable("chain-heading", c.chain as unknown[]) : html`<p>No chain was retrieved.</p>`}
<h2 id="events-heading">Recent events</h2>
${
  detail.events.length === 0
    ? html`<p>No recent events for this certificate.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="events-heading" id="events"><thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">Details</th><th scope="col">Deliveries</th></tr></thead>
<tbody>${detail.events.map(
        (event) => html`<tr><td>${when(event.createdAt)}</td><td><code>${event.type}</code></td><td>${eventDetails(event.data)}</td><td>${deliveries(event.deliveries)}</td></tr>`,
      )}</tbody></table></div>`
}`,
  );
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

/** A table whose columns are every key of its rows. */
function objectTable(labelledBy: string, rows: unknown[]): Html {
  const items = rows.filter((row): row is Record<string, unknown> => typeof row === "object" && row !== null);
  const columns = [...new Set(items.flatMap((row) => Object.keys(row)))];
  return html`<div class="table-wrap"><table aria-labelledby="${labelledBy}"><thead><tr>${columns.map((col) => html`<th scope="col">${label(col)}</th>`)}</tr></thead>
<tbody>${items.map((row) => html`<tr>${columns.map((col) => html`<td>${show(row[col])}</td>`)}</tr>`)}</tbody></table></div>`;
}

function eventDetails(data: unknown): string {
  if (!data || typeof data !== "object") return "";
  const d = data as Record<string, unknown>;
  const parts: string[] = [];
  if (typeof d.threshold === "number") parts.push(`threshold ${d.threshold} days`);
  if (typeof d.error === "string") parts.push(d.error);
  if (d.previous && typeof d.previous === "object") parts.push(`previous serial ${(d.previous as Record<string, unknown>).serialNumber ?? "?"}`);
  return parts.join("; ");
}

function deliveries(list: CertificateDetail["events"][number]["deliveries"]): string {
  if (list.length === 0) return "none";
  const count = (status: string) => list.filter((d) => d.status === status).length;
  return [["delivered", count("delivered")], ["pending", count("pending")], ["failed", count("failed")]]
    .filter(([, n]) => (n as number) > 0)
    .map(([status, n]) => `${n} ${status}`)
    .join(", ");
}
