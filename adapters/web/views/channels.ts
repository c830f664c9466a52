/** The Channels tab: the mode's notification channels, each with "Send test". */
import { type SignedIn, mayWrite } from "../../../core/accounts/mod.ts";
import type { Mode } from "../../../core/base/mod.ts";
import type { ChannelView } from "../../../core/schemas/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

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
  return page(
    { title: "Channels", me, tab: "channels", notice: view.notice, error: view.error },
    html`<h1>Notification channels</h1>
<nav class="toggle" aria-label="Data shown">${modeLink("live", "Live data")}${modeLink("test", "Test data")}</nav>
<p class="muted">Every event of the ${mode} data goes to each enabled channel. Channels are added and changed through the API
(<code>POST /v1/channels</code>); secrets are shown masked.${write ? " “Send test” sends a test event to one channel now and shows how it went." : ""}</p>
${
  channels.length === 0
    ? html`<p>No channels in ${mode} mode yet.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="channels-heading" id="channels"><caption id="channels-heading" class="visually-hidden">Channels (${mode})</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Sends to</th><th scope="col">Added</th>${
        write ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""
      }</tr></thead>
<tbody>${channels.map(
        (channel) => html`<tr data-channel-id="${channel.id}"><td>${channel.name}</td><td>${channel.type}</td><td>${
          channel.enabled ? html`<span class="badge state-active">enabled</span>` : html`<span class="badge state-off">disabled</span>`
        }</td><td class="mono small">${target(channel)}</td><td>${when(channel.createdAt)}</td>${
          write
            ? html`<td><form method="post" action="/channels/${channel.id}/test">${formToken(me)}<input type="hidden" name="mode" value="${mode}">
<button type="submit">Send test<span class="visually-hidden"> to ${channel.name}</span></button></form></td>`
            : ""
        }</tr>`,
      )}</tbody></table></div>`
}`,
  );
}

/** Where a channel sends, as the API shows it (already masked). */
function target(channel: ChannelView): string {
  const config = channel.config as Record<string, unknown>;
  for (const key of ["email", "url", "webhookUrl", "chatId"]) if (typeof config[key] === "string" || typeof config[key] === "number") return String(config[key]);
  return "";
}
