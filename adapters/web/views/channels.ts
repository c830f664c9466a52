/**
 * The Channels tab: the mode's notification channels with how their deliveries go (last delivery,
 * failing since, why), each with Send test, Edit, Enable/Disable and Remove; adding a channel of any
 * type (its secrets shown once where there are any to show, then masked, as the API shows them).
 */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { ChannelType, EventType, Mode } from "../../../core/base/mod.ts";
import { unresolvedByFilter } from "../../../core/notify/mod.ts";
import type { ChannelView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { ago, formToken, page, when } from "../layout.ts";
import { CHANNEL_FIELDS, CHANNEL_TYPE_NAMES, FILTER_EVENTS, headersText } from "../forms.ts";
import { alertBanners } from "./dashboard.ts";
import { onceField } from "../once.ts";

export interface ChannelsView {
  me: SignedIn;
  mode: Mode;
  channels: ChannelView[];
  notice?: string | null;
  error?: string | null;
}

export function channelsPage(view: ChannelsView): Html {
  const { me, mode, channels } = view;
  const write = mayWrite(me.user.role);
  const modeLink = (m: Mode, text: string) => html`<a href="/channels?mode=${m}"${m === mode ? html` aria-current="page"` : ""}>${text}</a>`;
  const enabled = channels.filter((channel) => channel.enabled);
  const failing = enabled.filter((channel) => channel.health?.failingSince);
  return page(
    { title: "Channels", me, tab: "channels", mode, notice: view.notice, error: view.error },
    html`<h1>Notification channels</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
${alertBanners({ channels: channels.length, enabled: enabled.length, failing }, mode, write)}
<p class="muted">Every event of the ${mode} data goes to each enabled channel whose filter takes it. Secrets are shown masked.${
      write ? " “Send test” sends a test event to one channel now and shows how it went." : ""
    }</p>
${
  channels.length === 0
    ? html`<p>No channels in ${mode} mode yet.</p>`
    : html`<div class="table-wrap"><table class="stack" aria-labelledby="channels-heading" id="channels"><caption id="channels-heading" class="visually-hidden">Channels (${mode})</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Sends to</th><th scope="col">Deliveries</th>${
        write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""
      }</tr></thead>
<tbody>${channels.map((channel) => channelRow(me, mode, channel, write))}</tbody></table></div>`
}
${write ? addLinks(mode) : ""}`,
  );
}

function channelRow(me: SignedIn, mode: Mode, channel: ChannelView, write: boolean): Html {
  return html`<tr data-channel-id="${channel.id}"><td data-label="Name">${channel.name}${filterNote(channel)}</td><td data-label="Type">${channel.type}</td><td data-label="State">${
    channel.enabled ? html`<span class="badge state-active">enabled</span>` : html`<span class="badge state-off">disabled</span>`
  }</td><td data-label="Sends to" class="mono small">${target(channel)}</td><td data-label="Deliveries" data-health="${healthState(channel)}">${health(channel)}</td>${
    write
      ? html`<td class="actions"><form method="post" action="/channels/${channel.id}/test">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Send test<span class="visually-hidden"> to ${channel.name}</span></button></form>
<a href="/channels/${channel.id}/edit?mode=${mode}">Edit<span class="visually-hidden"> ${channel.name}</span></a>
<form method="post" action="/channels/${channel.id}/${channel.enabled ? "disable" : "enable"}">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit" class="secondary">${channel.enabled ? "Disable" : "Enable"}<span class="visually-hidden"> ${channel.name}</span></button></form>
<a href="/channels/${channel.id}/remove?mode=${mode}">Remove<span class="visually-hidden"> ${channel.name}</span></a></td>`
      : ""
  }</tr>`;
}

/** "failing", "ok" or "unused": what a channel's deliveries say, for styling and tests. */
function healthState(channel: ChannelView): string {
  const h = channel.health;
  if (!h?.lastDeliveryAt) return "unused";
  return h.failingSince ? "failing" : "ok";
}

/** How the channel's deliveries went, in words. */
function health(channel: ChannelView): Html {
  const h = channel.health;
  if (!h?.lastDeliveryAt) return html`<span class="muted">nothing sent yet</span>`;
  if (h.failingSince) {
    return html`<span class="health-failing">Failing since ${when(h.failingSince)} (${ago(h.failingSince)})</span>${
      h.lastError ? html`<div class="small">${h.lastError}</div>` : ""
    }<div class="muted small">last attempt ${ago(h.lastDeliveryAt)}${!channel.enabled ? ", no retry while disabled" : h.lastStatus === "pending" ? ", will retry" : h.lastStatus === "failed" ? ", given up" : ""}</div>`;
  }
  return html`<span class="health-ok">Delivered ${ago(h.lastDeliveryAt)}</span>`;
}

function filterNote(channel: ChannelView): Html | string {
  const filter = channel.filter as { events?: string[]; tags?: string[] } | null;
  if (!filter) return "";
  const parts = [filter.events?.length ? `only ${filter.events.join(", ")}` : "", filter.tags?.length ? `tags ${filter.tags.join(", ")}` : ""].filter(Boolean);
  return html`<div class="muted small">${parts.join("; ")}</div>${channel.type === "pagerduty" && filter.events?.length ? unresolvedNote(filter.events as EventType[]) : ""}`;
}

/** A PagerDuty filter that lets incidents open but keeps out the news that ends them: they would stay open for good. */
function unresolvedNote(events: EventType[]): Html | string {
  const left = unresolvedByFilter(events);
  if (left.length === 0) return "";
  const ends = [...new Set(left.flatMap((entry) => entry.endsWith))];
  return html`<div class="small health-failing" data-unresolved="${ends.join(",")}">Incidents opened by ${left.map((entry) => entry.opens.replace("certificate.", "")).join(", ")} are never resolved: add ${ends.map((kind) => kind.replace("certificate.", "")).join(" and ")} to its events.</div>`;
}

/** Where a channel sends, as the API shows it (already masked). */
function target(channel: ChannelView): string {
  const config = channel.config as Record<string, unknown>;
  for (const key of ["email", "url", "webhookUrl", "chatId"]) if (typeof config[key] === "string" || typeof config[key] === "number") return String(config[key]);
  if (channel.type === "pagerduty") return "PagerDuty Events API";
  return "";
}

function addLinks(mode: Mode): Html {
  return html`<section class="card" id="add-channel" aria-labelledby="add-channel-heading"><h2 id="add-channel-heading">Add a channel</h2>
<ul class="type-links">${CHANNEL_TYPE_NAMES.map(([type, name]) => html`<li><a href="/channels/new?type=${type}&amp;mode=${mode}">${name}</a></li>`)}</ul></section>`;
}

export interface ChannelFormView {
  me: SignedIn;
  mode: Mode;
  type: ChannelType;
  /** The channel being edited (as the API shows it); absent when adding. */
  channel?: ChannelView;
  /** What the form held when the API refused it. */
  form?: Record<string, string>;
  error?: string | null;
}

/** Adding a channel of one type, or editing one: its name, its type's config, its filter, and (editing) whether it is enabled. */
export function channelFormPage(view: ChannelFormView): Html {
  const { me, mode, type, channel } = view;
  const form = view.form ?? {};
  // A refused form is shown as it was sent; a box left unticked is sent as nothing at all.
  const ticked = (field: string, stored: boolean) => (view.form ? form[field] === "1" : stored);
  const name = CHANNEL_TYPE_NAMES.find(([t]) => t === type)?.[1] ?? type;
  const config = (channel?.config ?? {}) as Record<string, unknown>;
  const filter = (channel?.filter ?? null) as { events?: string[]; tags?: string[] } | null;
  const value = (field: string, fallback: string) => (field in form ? form[field]! : fallback);
  const action = channel ? `/channels/${channel.id}/edit` : "/channels";
  const title = channel ? `Edit “${channel.name}”` : `Add a ${name} channel`;
  return page(
    { title, me, tab: "channels", error: view.error },
    html`<p><a href="/channels?mode=${mode}">← Channels (${mode})</a></p>
<h1>${title}</h1>
<form class="card" method="post" action="${action}" id="channel-form">
${formToken(me)}<input type="hidden" name="mode" value="${mode}"><input type="hidden" name="type" value="${type}">${channel ? "" : onceField()}
<label for="channel-name">Name</label><input id="channel-name" name="name" type="text" required maxlength="100" value="${value("name", channel?.name ?? "")}">
${CHANNEL_FIELDS[type].map((field) => {
  const id = `config-${field.name}`;
  const current = field.name === "headers" ? headersText(config.headers) : config[field.name] === undefined ? "" : String(config[field.name]);
  const shown = value(`config.${field.name}`, current);
  const hint = field.hint ? html`<p id="${id}-hint" class="hint">${field.hint}${channel && field.secret ? " Shown masked: leave it to keep it, or type a new one." : ""}</p>` : "";
  return field.type === "textarea"
    ? html`<label for="${id}">${field.label}</label><textarea id="${id}" name="config.${field.name}" spellcheck="false" aria-describedby="${id}-hint">${shown}</textarea>${hint}`
    : html`<label for="${id}">${field.label}</label><input id="${id}" name="config.${field.name}" type="${field.type === "url" ? "text" : field.type}" ${
        field.type === "email" ? "" : html`autocapitalize="off" `
      }spellcheck="false" autocomplete="off" value="${shown}"${field.name === "headers" ? "" : html` required`}${field.hint ? html` aria-describedby="${id}-hint"` : ""}>${hint}`;
})}
${
  channel
    ? html`<fieldset><legend>State</legend><label><input type="checkbox" name="enabled" value="1"${
        ticked("enabled", channel.enabled) ? html` checked` : ""
      }> Enabled: alerts go to this channel</label></fieldset>`
    : ""
}
<details class="more"${filter || form["filter.tags"] ? html` open` : ""}><summary>Only some alerts (optional)</summary>
<fieldset><legend>Only these events <span class="muted">(none ticked: every event)</span></legend>
${FILTER_EVENTS.map((kind) => {
  return html`<label><input type="checkbox" name="filter.event.${kind}" value="1"${ticked(`filter.event.${kind}`, (filter?.events ?? []).includes(kind)) ? html` checked` : ""}> ${kind.replace("certificate.", "")}</label>`;
})}
</fieldset>
<label for="filter-tags">Only certificates with one of these tags <span class="muted">(empty: every certificate)</span></label>
<input id="filter-tags" name="filter.tags" type="text" autocapitalize="off" spellcheck="false" value="${value("filter.tags", (filter?.tags ?? []).join(", "))}">
</details>
<button type="submit">${channel ? "Save channel" : "Add channel"}</button> <a class="button secondary" href="/channels?mode=${mode}">Cancel</a>
</form>`,
  );
}

/** A channel just added: for a webhook, its signing secret, shown this once. */
export function channelCreatedPage(me: SignedIn, mode: Mode, channel: ChannelView, signingSecret: string): Html {
  return page(
    { title: "Channel added", me, tab: "channels", notice: "The channel was added." },
    html`<h1>“${channel.name}” was added</h1>
<section class="card" aria-labelledby="secret-heading">
<h2 id="secret-heading">Its signing secret</h2>
<p class="warning" role="alert"><strong>Copy this secret now. It will not be shown again.</strong> Your receiver checks each delivery's
<code>webhook-signature</code> with it (Standard Webhooks).</p>
<label for="signing-secret">Signing secret</label>
<div class="secret"><input id="signing-secret" type="text" readonly value="${signingSecret}" autocomplete="off" spellcheck="false">
<button type="button" data-copy="signing-secret" hidden>Copy</button></div>
<p aria-live="polite" class="small" data-copy-status></p>
<div class="actions"><form method="post" action="/channels/${channel.id}/test">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Send test<span class="visually-hidden"> to ${channel.name}</span></button></form>
<a class="button secondary" href="/channels?mode=${mode}">Done</a></div>
</section>`,
  );
}

export function removeChannelPage(me: SignedIn, mode: Mode, channel: ChannelView): Html {
  return page(
    { title: "Remove channel", me, tab: "channels" },
    html`<h1>Remove the channel “${channel.name}”?</h1>
<section class="card">
<p>No alert goes to it any more (${channel.type}, ${mode}), and its pending notifications are cancelled. To pause it instead, disable it.</p>
<form method="post" action="/channels/${channel.id}/remove">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit" class="danger">Remove channel</button> <a class="button secondary" href="/channels?mode=${mode}">Cancel</a></form>
</section>`,
  );
}
