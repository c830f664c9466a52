/** IMAP STARTTLS (RFC 3501 §6.2.1, RFC 9051 §6.2.1): greeting `* OK`, `A1 STARTTLS`, tagged `A1 OK`. */
import type { Conversation } from "./_conversation.ts";

const TAG = "A1";

export async function upgradeImap(c: Conversation): Promise<void> {
  const greeting = await c.line();
  if (!/^\* OK(\s|$)/i.test(greeting)) throw c.refused(`greeted with "${greeting.slice(0, 80)}" instead of "* OK"`);
  c.write(`${TAG} STARTTLS\r\n`);
  for (;;) {
    const line = await c.line();
    // A BYE is the server hanging up (RFC 9051 §7.1.5): a "no" to the upgrade, not a broken protocol.
    if (/^\* BYE(\s|$)/i.test(line)) throw c.refused(`said "${line.slice(0, 80)}" to STARTTLS`);
    if (line.startsWith("* ")) continue; // untagged data (a CAPABILITY, an alert) may come first
    const tagged = new RegExp(`^${TAG} (OK|NO|BAD)(\\s|$)`, "i").exec(line);
    if (!tagged) throw c.protocolError(`answered "${line.slice(0, 80)}" to STARTTLS`);
    if (tagged[1]!.toUpperCase() !== "OK") throw c.refused(`answered STARTTLS with ${tagged[1]!.toUpperCase()}`);
    return;
  }
}
