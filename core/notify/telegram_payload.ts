/**
 * Telegram's Bot API `sendMessage`: plain text (no parse_mode, so nothing a certificate says can be
 * read as markup), at most 4096 characters.
 */
import type { EventRecord } from "../base/records.ts";
import type { Described } from "./_describe.ts";
import { cut } from "./_text.ts";

export const TELEGRAM_TEXT_MAX = 4096;

export function telegramPayload(event: EventRecord, described: Described, chatId: number | string): { chat_id: number | string; text: string } {
  const d = described;
  const lines = [d.headline, "", d.summary];
  if (d.facts.length > 0) lines.push("", ...d.facts.map((fact) => `${fact.name}: ${fact.value}`));
  lines.push("", `certkeeper · ${event.id}`);
  const text = lines.join("\n");
  // Counted in UTF-16 units, which is how Telegram counts; never cut a surrogate pair in half.
  const shortened = cut(text, TELEGRAM_TEXT_MAX);
  return { chat_id: chatId, text: shortened };
}
