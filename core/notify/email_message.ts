/** The email form of an event: a subject naming the domain and what happened, a text and an HTML part. */
import type { EventRecord, ChannelRecord } from "../base/records.ts";
import type { EmailMessage } from "./ports.ts";
import type { Described } from "./_describe.ts";

export function emailMessage(
  event: EventRecord,
  channel: ChannelRecord,
  options: { described: Described; to: string; mailFrom: string },
): EmailMessage {
  const d = options.described;
  return {
    from: options.mailFrom,
    to: options.to,
    subject: d.headline,
    text: emailText(event, d),
    html: emailHtml(event, d),
    messageId: `<${event.id}+${channel.id}@certkeeper>`,
  };
}

function emailText(event: EventRecord, d: Described): string {
  const width = Math.max(0, ...d.facts.map((fact) => fact.name.length)) + 2;
  const lines = [d.summary, ""];
  for (const fact of d.facts) lines.push(`${`${fact.name}:`.padEnd(width)}${fact.value}`);
  if (d.facts.length > 0) lines.push("");
  lines.push(`Event ${event.id} (${event.type}) at ${d.createdAt}`, "-- ", "certkeeper");
  return lines.join("\n") + "\n";
}

function emailHtml(event: EventRecord, d: Described): string {
  const rows = d.facts
    .map(
      (fact) =>
        `<tr><th align="left" style="padding:4px 16px 4px 0;color:#555;font-weight:normal">${escapeHtml(fact.name)}</th>` +
        `<td style="padding:4px 0">${escapeHtml(fact.value)}</td></tr>`,
    )
    .join("\n");
  return [
    "<!doctype html>",
    `<html><head><meta charset="utf-8"><title>${escapeHtml(d.headline)}</title></head>`,
    '<body style="font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;color:#222">',
    `<h2 style="font-size:18px;margin:0 0 12px">${escapeHtml(d.label)}</h2>`,
    `<p>${escapeHtml(d.summary)}</p>`,
    rows ? `<table cellspacing="0" cellpadding="0">\n${rows}\n</table>` : "",
    `<p style="color:#888;font-size:12px">Event ${escapeHtml(event.id)} (${escapeHtml(event.type)}) at ${escapeHtml(d.createdAt)} · certkeeper</p>`,
    "</body></html>",
  ]
    .filter((line) => line !== "")
    .join("\n");
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
