/**
 * Microsoft Teams: a workflow webhook ("Post to a channel when a webhook request is received") takes
 * a message whose one attachment is an Adaptive Card. Version 1.4 is what Teams renders everywhere.
 */
import type { EventRecord, EventType } from "../base/records.ts";
import type { Described } from "./_describe.ts";
import { cut } from "./_text.ts";

export const ADAPTIVE_CARD_VERSION = "1.4";
const CARD_CONTENT_TYPE = "application/vnd.microsoft.card.adaptive";
const TEXT_MAX = 2000;

/** TextBlock colours: the card's own palette, not RGB. */
const COLORS: Record<EventType, "Attention" | "Warning" | "Good" | "Accent"> = {
  "certificate.expiring": "Warning",
  "certificate.expired": "Attention",
  "certificate.renewed": "Good",
  "certificate.invalid": "Attention",
  "certificate.unreachable": "Warning",
  "certificate.recovered": "Good",
  "certificate.chain_expiring": "Warning",
  "certificate.revoked": "Attention",
  "certificate.issued": "Accent",
  "certificate.renewal_overdue": "Warning",
  "certificate.renewal_requested": "Warning",
  "certificate.not_deployed": "Warning",
  "certificate.renewal_blocked": "Warning",
  test: "Accent",
};

export function teamsPayload(event: EventRecord, described: Described): Record<string, unknown> {
  const d = described;
  const body: Record<string, unknown>[] = [
    { type: "TextBlock", text: plain(d.headline), weight: "Bolder", size: "Medium", color: COLORS[event.type], wrap: true },
    { type: "TextBlock", text: plain(d.summary), wrap: true },
  ];
  if (d.facts.length > 0) {
    body.push({ type: "FactSet", facts: d.facts.map((fact) => ({ title: plain(fact.name), value: plain(fact.value) })) });
  }
  body.push({ type: "TextBlock", text: `certkeeper · ${event.id} · ${d.createdAt}`, isSubtle: true, size: "Small", wrap: true });
  return {
    type: "message",
    attachments: [
      {
        contentType: CARD_CONTENT_TYPE,
        contentUrl: null,
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: ADAPTIVE_CARD_VERSION,
          body,
        },
      },
    ],
  };
}

/**
 * Text from a certificate (its issuer, say) is its owner's to choose: TextBlocks render a markdown
 * subset (bold, italic, links, lists), so exactly the characters that make those are escaped to show as
 * themselves; everything else (parentheses in "(7 days)", say) is left as it reads.
 */
export function plain(text: string): string {
  // A list marker is escaped as CommonMark escapes one: `\- item`, `1\. item` (a backslash before a
  // digit is no escape, and would show).
  const escaped = text
    .replace(/[\\*_[\]]/g, "\\$&")
    .replace(/^(\s*)(?:([-+*])|(\d+)\.)(\s)/gm, (_, space: string, bullet: string | undefined, digits: string | undefined, after: string) => `${space}${bullet !== undefined ? `\\${bullet}` : `${digits}\\.`}${after}`);
  return cut(escaped, TEXT_MAX, true);
}
