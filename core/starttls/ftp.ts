/** FTP AUTH TLS (RFC 4217 §4): greeting 220 (after an optional 120), `AUTH TLS`, 234. */
import type { Conversation } from "./_conversation.ts";
import { numberedReply } from "./_reply.ts";

export async function upgradeFtp(c: Conversation): Promise<void> {
  let greeting = await numberedReply(c);
  if (greeting.code === 120) greeting = await numberedReply(c); // "service ready in nnn minutes"
  if (greeting.code !== 220) throw c.refused(`greeted with ${greeting.code} instead of 220`);
  c.write("AUTH TLS\r\n");
  const answer = await numberedReply(c);
  if (answer.code !== 234) throw c.refused(`answered AUTH TLS with ${answer.code}`);
}
