/**
 * The web face's one stylesheet and one small script, served from this server (the
 * Content-Security-Policy allows nothing else). The script only adds the copy buttons (shown only
 * with it) and focuses a refused form's field where the browser's autofocus does not: every page works
 * without it.
 */

export const STYLESHEET = `
:root { --fg: #1d2330; --muted: #5b6475; --bg: #f6f7f9; --card: #fff; --line: #d9dde5; --accent: #1f5fbf;
  --ok: #146c2e; --ok-bg: #e3f4e8; --warn: #8a5200; --warn-bg: #fff1d6; --bad: #a4161a; --bad-bg: #fde4e4;
  --off: #4b5563; --off-bg: #eceef2; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); line-height: 1.45; font-size: 16px; }
a { color: var(--accent); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 2px; }
.skip { position: absolute; left: -999px; } .skip:focus { left: 8px; top: 8px; background: #fff; padding: 6px; z-index: 2; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
header.top { display: flex; flex-wrap: wrap; gap: 8px 20px; align-items: center; padding: 10px 16px; background: #14213d; color: #fff; }
header.top a { color: #fff; } header.top :focus-visible { outline-color: #fff; } .brand { font-weight: 700; text-decoration: none; } .org { opacity: .8; }
header.top nav { display: flex; gap: 4px 14px; flex-wrap: wrap; }
header.top nav a[aria-current="page"] { font-weight: 700; text-decoration-thickness: 3px; }
header.top form { margin-left: auto; display: flex; gap: 8px; align-items: center; font-size: .9em; }
main { max-width: 1100px; margin: 0 auto; padding: 16px; } main.narrow { max-width: 420px; margin-top: 8vh; }
h1 { font-size: 1.5em; margin: .3em 0 .6em; overflow-wrap: anywhere; } h2 { font-size: 1.2em; margin: 1.4em 0 .5em; }
.card > h2:first-child { margin-top: 0; }
section.card, form.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 14px 16px; margin: 12px 0; }
.table-wrap { position: relative; overflow-x: auto; background: var(--card); border: 1px solid var(--line); border-radius: 8px; }
table { border-collapse: collapse; width: 100%; } th, td { text-align: left; padding: 8px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
td[data-label="Certificate"], td[data-label="Name"], td[data-label="Sends to"] { overflow-wrap: anywhere; min-width: 12ch; }
th { font-size: .85em; color: var(--muted); font-weight: 600; } tr:last-child td { border-bottom: 0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; } .muted { color: var(--muted); } .small { font-size: .85em; }
code, .mono { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: .92em; overflow-wrap: anywhere; }
label { display: block; font-weight: 600; margin: 10px 0 4px; } fieldset { border: 0; padding: 0; margin: 10px 0; } legend { font-weight: 600; }
fieldset label { display: inline-block; font-weight: 400; margin-right: 16px; } fieldset input { margin: 0 6px 0 0; }
input[type=text], input[type=email], input[type=password], input[type=search], input:not([type]), select { width: 100%; max-width: 32em; padding: 8px; font: inherit;
  border: 1px solid #8b93a3; border-radius: 6px; background: #fff; }
.row { display: flex; flex-wrap: wrap; gap: 0 16px; } .row > div { flex: 1 1 12em; }
[hidden] { display: none !important; }
button, .button { display: inline-block; font: inherit; padding: 8px 14px; border-radius: 6px; border: 1px solid var(--accent); background: var(--accent);
  color: #fff; cursor: pointer; text-decoration: none; margin-top: 10px; }
button.secondary, .button.secondary { background: #fff; color: var(--accent); } button.danger { background: var(--bad); border-color: var(--bad); }
header.top button { margin: 0; padding: 4px 10px; background: transparent; border-color: #fff; }
td form { display: flex; gap: 6px; align-items: center; flex-wrap: wrap; } td form select { width: auto; } td button { margin: 0; padding: 4px 10px; }
.notice, .error, .warning { border-radius: 8px; padding: 10px 14px; margin: 12px 0; border: 1px solid; }
.notice { background: var(--ok-bg); border-color: var(--ok); } .error { background: var(--bad-bg); border-color: var(--bad); }
.warning { background: var(--warn-bg); border-color: var(--warn); }
.badge { display: inline-block; padding: 1px 8px; border-radius: 999px; font-size: .85em; font-weight: 600; border: 1px solid; white-space: nowrap; }
.status-valid, .mode-live, .state-active { color: var(--ok); background: var(--ok-bg); }
.status-expiring, .mode-test { color: var(--warn); background: var(--warn-bg); }
.status-expired, .status-invalid, .status-revoked, .state-revoked { color: var(--bad); background: var(--bad-bg); }
.status-unreachable, .state-off { color: var(--off); background: var(--off-bg); }
/* A tag holds up to 50 characters: unlike other badges it wraps (anywhere, as it may have no space), its
   1em radius still a pill on one line and a rounded box on more, so a phone never scrolls sideways. */
.tags { list-style: none; margin: 4px 0 0; padding: 0; display: flex; flex-wrap: wrap; gap: 4px; } .tag { font-weight: 400; color: var(--accent); white-space: normal; overflow-wrap: anywhere; border-radius: 1em; }
.toggle { display: inline-flex; border: 1px solid var(--accent); border-radius: 6px; overflow: hidden; }
.toggle a { padding: 4px 12px; text-decoration: none; } .toggle a[aria-current="page"] { background: var(--accent); color: #fff; }
.secret { display: flex; gap: 8px; flex-wrap: wrap; align-items: center; } .secret input { flex: 1 1 20em; font-family: ui-monospace, Menlo, Consolas, monospace; }
.secret button { margin: 0; }
.counts { list-style: none; padding: 0; margin: 8px 0; display: flex; flex-wrap: wrap; gap: 8px; }
.counts a.count { display: inline-block; padding: 6px 12px; border-radius: 8px; border: 1px solid; text-decoration: none; font-weight: 600; }
.counts a.count .n { font-size: 1.3em; margin-right: 4px; font-variant-numeric: tabular-nums; }
.counts a.count[aria-current="true"] { outline: 3px solid var(--accent); }
figure.chart { margin: 16px 0; background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; }
figure.chart figcaption { font-weight: 600; margin-bottom: 6px; } figure.chart svg { display: block; width: 100%; height: auto; }
.chart .grid line { stroke: var(--line); stroke-width: 1; } .chart text { fill: var(--muted); font-size: 12px; font-family: inherit; }
.chart rect.bar { fill: #9fb7e0; } .chart rect.bar.some { fill: var(--accent); } .chart text.value { fill: var(--fg); font-weight: 600; }
.chart details { margin-top: 6px; } .chart summary { cursor: pointer; color: var(--accent); }
form.filters { margin: 8px 0 12px; } form.filters .row > div { flex: 1 1 10em; }
.pager { display: flex; gap: 16px; margin: 10px 0; } .pager a { font-weight: 600; }
dl.fields { display: grid; grid-template-columns: minmax(8em, max-content) 1fr; gap: 4px 16px; margin: 0; }
dl.fields dt { color: var(--muted); font-weight: 600; } dl.fields dd { margin: 0; overflow-wrap: anywhere; }
dl.nested { display: grid; grid-template-columns: max-content 1fr; gap: 0 10px; margin: 0; } dl.nested dd { margin: 0; }
.status-revoked { color: var(--bad); background: var(--bad-bg); }
p.verdict { font-size: 1.1em; overflow-wrap: anywhere; border-left: 6px solid var(--line); padding: 10px 14px; background: var(--card); border-radius: 6px; margin: 8px 0 12px; }
p.verdict[data-status="valid"] { border-left-color: var(--ok); } p.verdict[data-status="expiring"] { border-left-color: var(--warn); }
p.verdict[data-status="expired"], p.verdict[data-status="invalid"], p.verdict[data-status="revoked"] { border-left-color: var(--bad); }
p.verdict[data-status="unreachable"] { border-left-color: var(--off); }
.banner { border-radius: 8px; padding: 10px 14px; margin: 12px 0; border: 1px solid; }
.banner.warning { background: var(--warn-bg); border-color: var(--warn); } .banner.error { background: var(--bad-bg); border-color: var(--bad); }
.banner p { margin: 4px 0; }
.actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 8px 0; }
.actions form { display: inline; margin: 0; } .actions button, .actions .button { margin: 0; }
td.actions { display: table-cell; } td.actions > * { margin: 2px 6px 2px 0; }
td.actions form { display: inline-flex; }
.type-links { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 8px; }
.type-links a { display: inline-block; padding: 6px 12px; border: 1px solid var(--accent); border-radius: 6px; text-decoration: none; }
textarea { width: 100%; max-width: 32em; min-height: 5em; padding: 8px; font: inherit; border: 1px solid #8b93a3; border-radius: 6px; }
details.more { margin: 10px 0; } details.more summary { cursor: pointer; color: var(--accent); font-weight: 600; }
.hint { font-size: .85em; color: var(--muted); margin: 2px 0 0; }
.health-failing { color: var(--bad); font-weight: 600; } .health-ok { color: var(--ok); }
@media (max-width: 640px) {
  .table-wrap { overflow-x: visible; border: 0; background: transparent; }
  table.stack, table.stack tbody, table.stack tr, table.stack td { display: block; width: 100%; }
  table.stack thead, table.stack caption { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
  table.stack tr { background: var(--card); border: 1px solid var(--line); border-radius: 8px; margin: 0 0 10px; padding: 6px 0; }
  table.stack td { border: 0; padding: 3px 12px; overflow-wrap: anywhere; }
  table.stack td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); font-weight: 600; }
  table.stack td.num { text-align: left; }
}
@media (max-width: 640px) { main { padding: 10px; } header.top form { margin-left: 0; } th, td { padding: 6px; }
  .chart g.week.odd text.label { display: none; } .chart text { font-size: 22px; } .chart text.value { font-size: 24px; } dl.fields { grid-template-columns: 1fr; } dl.fields dd { margin-bottom: 6px; } }
`.trim();

export const SCRIPT = `
// Copy buttons are shown only where this script runs: without it, the text is selected and copied by hand.
for (const button of document.querySelectorAll("[data-copy][hidden]")) button.hidden = false;
// A refused form's field (autofocus) is focused also where the address names a place in the page
// (a form posted to .../edit#edit), where browsers do not autofocus.
const refused = document.querySelector("[autofocus]");
if (refused && document.activeElement === document.body) refused.focus();
document.addEventListener("click", async (event) => {
  const button = event.target instanceof Element ? event.target.closest("[data-copy]") : null;
  if (!button) return;
  const field = document.getElementById(button.getAttribute("data-copy"));
  const status = document.querySelector("[data-copy-status]");
  field.select();
  try {
    await navigator.clipboard.writeText(field.value);
    if (status) status.textContent = "Copied to the clipboard.";
  } catch {
    if (status) status.textContent = "Press Ctrl+C (or Cmd+C) to copy the selected key.";
  }
});
`.trim();

/** Changes whenever the files change, for the pages' ?v= (assets are cached for a day). */
export const ASSET_VERSION = (() => {
  let hash = 0;
  for (const ch of STYLESHEET + SCRIPT) hash = (Math.imul(hash, 31) + ch.charCodeAt(0)) | 0;
  return (hash >>> 0).toString(36);
})();
