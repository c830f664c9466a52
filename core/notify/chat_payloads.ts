/**
 * Chat payloads: Discord's webhook message (`content` + `embeds`) and Slack's incoming-webhook
 * message (`text` + `blocks`, which Mattermost and Rocket.Chat accept too).
 */
import type { EventRecord, EventType } from "../base/records.ts";
import type { Described } from "./_describe.ts";
import { cut } from "./_text.ts";

/** Embed colours: amber for warnings, red for failures, green for good news, blue for tests. */
export const DISCORD_COLORS: Record<EventType, number> = {
  "certificate.expiring": 0xf0a30a,
  "certificate.expired": 0xd64541,
  "certificate.renewed": 0x2ead5b,
  "certificate.invalid": 0xd64541,
  "certificate.unreachable": 0xe67e22,
  "certificate.recovered": 0x2ead5b,
  "certificate.chain_expiring": 0xf0a30a,
  "certificate.revoked": 0xd64541,
  "certificate.issued": 0x8b5cf6,
  "certificate.renewal_overdue": 0xe67e22,
  "certificate.renewal_requested": 0xe67e22,
  "certificate.not_deployed": 0xf0a30a,
  "certificate.renewal_blocked": 0xf0a30a,
  test: 0x3b82f6,
};

// Discord's documented limits.
const CONTENT_MAX = 2000;
const TITLE_MAX = 256;
const DESCRIPTION_MAX = 4096;
const FIELD_NAME_MAX = 256;
const FIELD_VALUE_MAX = 1024;
const FIELDS_MAX = 25;
const EMBED_TOTAL_MAX = 6000;
/** What the description keeps at least, the fields' values giving way first down to {@link MIN_FIELD_VALUE}. */
const MIN_DESCRIPTION = 256;
const MIN_FIELD_VALUE = 64;

export function discordPayload(event: EventRecord, described: Described): Record<string, unknown> {
  const d = described;
  const title = truncate(escapeDiscord(d.label), TITLE_MAX);
  const footer = `certkeeper · ${event.id}`;
  const fields = d.facts.slice(0, FIELDS_MAX).map((fact) => ({
    name: truncate(escapeDiscord(fact.name), FIELD_NAME_MAX),
    value: truncate(escapeDiscord(fact.value), FIELD_VALUE_MAX),
    inline: fact.value.length <= 40,
  }));
  // Discord also bounds an embed's text in all (title, description, field names and values, footer):
  // beyond it the message is refused, every retry. The description gives way first, then the fields' values.
  let room = EMBED_TOTAL_MAX - title.length - footer.length - fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0);
  for (let i = fields.length - 1; i >= 0 && room < MIN_DESCRIPTION; i--) {
    const field = fields[i]!;
    const value = truncate(field.value, Math.max(MIN_FIELD_VALUE, field.value.length - (MIN_DESCRIPTION - room)));
    room += field.value.length - value.length;
    field.value = value;
  }
  return {
    content: truncate(escapeDiscord(d.headline), CONTENT_MAX),
    embeds: [
      {
        title,
        description: truncate(escapeDiscord(d.summary), Math.min(DESCRIPTION_MAX, Math.max(1, room))),
        color: DISCORD_COLORS[event.type],
        fields,
        footer: { text: footer },
        timestamp: d.createdAt,
      },
    ],
    // Text from a certificate (its issuer, say) is the certificate owner's to choose: never ping anyone.
    allowed_mentions: { parse: [] },
  };
}

// Slack's documented limits.
const SECTION_TEXT_MAX = 3000;
const SECTION_FIELDS_MAX = 10;
const FIELD_TEXT_MAX = 2000;

export function slackPayload(event: EventRecord, described: Described): Record<string, unknown> {
  const d = described;
  const blocks: Record<string, unknown>[] = [
    {
      type: "section",
      text: { type: "mrkdwn", text: truncate(`*${escapeSlack(d.label)}*\n${escapeSlack(d.summary)}`, SECTION_TEXT_MAX) },
    },
  ];
  // A section holds at most 10 fields: the facts past them go on in another (a message holds 50 blocks).
  for (let first = 0; first < d.facts.length; first += SECTION_FIELDS_MAX) {
    blocks.push({
      type: "section",
      fields: d.facts.slice(first, first + SECTION_FIELDS_MAX).map((fact) => ({
        type: "mrkdwn",
        text: truncate(`*${escapeSlack(fact.name)}*\n${escapeSlack(fact.value)}`, FIELD_TEXT_MAX),
      })),
    });
  }
  blocks.push({
    type: "context",
    elements: [{ type: "mrkdwn", text: `certkeeper · ${event.id} · ${d.createdAt}` }],
  });
  return { text: truncate(escapeSlack(d.headline), SECTION_TEXT_MAX), blocks };
}

/**
 * Escapes Discord markdown: emphasis, code, spoilers and masked links anywhere, `<` (mentions,
 * channel links, timestamps), and headings, quotes and lists at the start of a line.
 */
export function escapeDiscord(text: string): string {
  return text.replace(/[\\*_~`|[\]<]/g, "\\$&").replace(/^([#>-])/gm, "\\$1");
}

/**
 * Slack's mrkdwn needs only these three escaped (https://api.slack.com/reference/surfaces/formatting).
 * Mattermost and Rocket.Chat, which take the same payload, notify on `@name`, `@channel`, `@all` and
 * `@here` in plain text: an @ that begins a word before a name gets a word joiner (U+2060), unseen, so
 * that none is a mention (one inside a word, an address or a URL is none already, and is left whole).
 */
export function escapeSlack(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/(^|[\s(])@(?=[\p{L}\p{N}_.-])/gu, "$1@\u2060");
}

/** Cut to a limit; the text is markup with its specials escaped. */
const truncate = (text: string, max: number) => cut(text, max, true);
