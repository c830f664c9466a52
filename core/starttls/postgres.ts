/**
 * PostgreSQL SSLRequest (protocol 3.0, "SSL Session Encryption"): the 8-byte request, one byte back:
 * `S` to go on with TLS, `N` (or an old server's error message, `E`) when it will not.
 */
import type { Conversation } from "./_conversation.ts";

/** Length 8, then the SSLRequest code 80877103 (1234 << 16 | 5679). */
export const SSL_REQUEST = Uint8Array.of(0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f);

export async function upgradePostgres(c: Conversation): Promise<void> {
  c.write(SSL_REQUEST);
  const answer = (await c.bytes(1))[0];
  if (answer === 0x53) return; // 'S'
  if (answer === 0x4e) throw c.refused("does not accept TLS (answered N to the SSLRequest)");
  if (answer === 0x45) throw c.refused("answered the SSLRequest with an error");
  throw c.protocolError(`answered the SSLRequest with byte ${answer}`);
}
