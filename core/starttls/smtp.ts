/**
 * SMTP STARTTLS (RFC 3207): greeting 220, `EHLO`, STARTTLS among the extensions, `STARTTLS`, 220.
 * The EHLO name is a fixed placeholder: the checker has no name of its own to announce.
 */
import type { Conversation } from "./_conversation.ts";
import { numberedReply } from "./_reply.ts";

export const EHLO_NAME = "certkeeper.invalid";

export async function upgradeSmtp(c: Conversation): Promise<void> {
  const greeting = await numberedReply(c);
  if (greeting.code !== 220) throw c.refused(`greeted with ${greeting.code} instead of 220`);
  c.write(`EHLO ${EHLO_NAME}\r\n`);
  const ehlo = await numberedReply(c);
  if (ehlo.code !== 250) throw c.refused(`answered EHLO with ${ehlo.code}`);
  if (!ehlo.lines.slice(1).some((line) => /^STARTTLS(\s|$)/i.test(line.trim()))) throw c.refused("does not offer STARTTLS");
  c.write("STARTTLS\r\n");
  const answer = await numberedReply(c);
  if (answer.code !== 220) throw c.refused(`answered STARTTLS with ${answer.code}`);
}
