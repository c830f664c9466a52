/** POP3 STLS (RFC 2595 §4): greeting `+OK`, `STLS`, `+OK`. */
import type { Conversation } from "./_conversation.ts";

export async function upgradePop3(c: Conversation): Promise<void> {
  const greeting = await c.line();
  if (!/^\+OK(\s|$)/.test(greeting)) throw c.refused(`greeted with "${greeting.slice(0, 80)}" instead of +OK`);
  c.write("STLS\r\n");
  const answer = await c.line();
  if (!/^\+OK(\s|$)/.test(answer)) throw c.refused(`answered STLS with "${answer.slice(0, 80)}"`);
}
