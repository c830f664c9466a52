/** The numbered replies of SMTP (RFC 5321 §4.2) and FTP (RFC 959 §4.2): `ddd text`, or `ddd-` … `ddd text`. */
import type { Conversation } from "./_conversation.ts";

export interface NumberedReply {
  code: number;
  /** Each line's text after the code and its separator. */
  lines: string[];
}

export async function numberedReply(c: Conversation): Promise<NumberedReply> {
  const first = await c.line();
  const match = /^(\d{3})([ -]?)(.*)$/.exec(first);
  if (!match) throw c.protocolError(`answered "${first.slice(0, 80)}", which is not a numbered reply`);
  const code = match[1]!;
  const lines = [match[3]!];
  if (match[2] === "-") {
    // The reply ends at the line that starts with the same code and a space; FTP allows other lines between.
    for (;;) {
      const line = await c.line();
      if (line.startsWith(`${code} `) || line === code) {
        lines.push(line.slice(4));
        break;
      }
      lines.push(line.startsWith(`${code}-`) ? line.slice(4) : line);
    }
  }
  return { code: Number(code), lines };
}
