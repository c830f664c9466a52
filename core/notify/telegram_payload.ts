/**
 * Telegram's Bot API `sendMessage`: plain text (no parse_mode, so nothing a certificate says can be
 * read as markup), at most 4096 characters.
 */
import type { EventRecord } from "../base/records.ts";
import type { Described } from "./_describe.ts";

export const TELEGRAM_TEXT_MAX = 4096;

export function telegramPayload(event: EventRecord, described: Described, chatId: number | string): { chat_id: number | string; text: string } {
  const d = described;
  const lines = [d.headline, "", d.summary];
  if (d.facts.length > 0) lines.push("", ...d.facts.map((fact) => `${fact.name}: ${fact.value}`));
  lines.push("", `certkeeper · ${event.id}`);
  const text = lines.join("\n");
  // Counted in UTF-16 units, which is how Telegram counts; never cut a surrogate pair in half.
  const cut = text.length <= TELEGRAM_TEXT_MAX ? text : `${text.slice(0, TELEGRAM_TEXT_MAX - 1).replace(/[\uD800-\uDBFF]$/, "")}…`;
  return { chat_id: chatId, text: cut };
}
