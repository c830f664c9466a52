/**
 * LDAP StartTLS (RFC 4511 §4.14): an ExtendedRequest naming 1.3.6.1.4.1.1466.20037, and the server's
 * ExtendedResponse with resultCode success (0) before TLS. BER, definite lengths only (§5.1).
 */
import type { Conversation } from "./_conversation.ts";

export const START_TLS_OID = "1.3.6.1.4.1.1466.20037";

/** LDAPMessage { messageID 1, [APPLICATION 23] ExtendedRequest { [0] requestName } }. */
export const START_TLS_REQUEST = (() => {
  const oid = Buffer.from(START_TLS_OID, "latin1");
  const name = Buffer.concat([Buffer.of(0x80, oid.length), oid]);
  const op = Buffer.concat([Buffer.of(0x77, name.length), name]);
  const body = Buffer.concat([Buffer.of(0x02, 0x01, 0x01), op]);
  return new Uint8Array(Buffer.concat([Buffer.of(0x30, body.length), body]));
})();

const EXTENDED_RESPONSE = 0x78;

interface Element {
  tag: number;
  value: Buffer;
  /** Offset just past this element in the buffer it was read from. */
  end: number;
}

/** One BER element of `buffer` at `offset`; null when the buffer holds it only partly. */
function element(buffer: Buffer, offset: number): Element | null | "malformed" {
  if (buffer.length < offset + 2) return null;
  const tag = buffer[offset]!;
  let length = buffer[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    // Indefinite (0), or more octets than any length needs. Active Directory writes every length in
    // four octets (X.690 §8.1.3.5 allows it; RFC 4511 §5.1 forbids only the indefinite form).
    if (count === 0 || count > 4) return "malformed";
    if (buffer.length < start + count) return null;
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buffer[start + i]!;
    start += count;
  }
  if (buffer.length < start + length) return null;
  return { tag, value: buffer.subarray(start, start + length), end: start + length };
}

export async function upgradeLdap(c: Conversation): Promise<void> {
  c.write(START_TLS_REQUEST);
  const header = await c.bytes(2);
  let lengthBytes: Buffer = Buffer.alloc(0);
  if (header[1]! & 0x80) lengthBytes = await c.bytes(Math.min(header[1]! & 0x7f, 4));
  let length = header[1]!;
  if (length & 0x80) {
    if (lengthBytes.length === 0 || (header[1]! & 0x7f) > 4) throw c.protocolError("sent a malformed LDAP message");
    length = 0;
    for (const byte of lengthBytes) length = length * 256 + byte;
  }
  if (header[0] !== 0x30) throw c.protocolError("did not answer with an LDAP message");
  const body = await c.bytes(length);
  const id = element(body, 0);
  if (!id || id === "malformed" || id.tag !== 0x02) throw c.protocolError("sent an LDAP message without a message ID");
  const op = element(body, id.end);
  if (!op || op === "malformed" || op.tag !== EXTENDED_RESPONSE) throw c.protocolError("did not answer StartTLS with an ExtendedResponse");
  const result = element(op.value, 0);
  if (!result || result === "malformed" || result.tag !== 0x0a || result.value.length === 0) {
    throw c.protocolError("sent an ExtendedResponse without a result code");
  }
  const code = result.value.reduce((n, byte) => (n << 8) | byte, 0);
  const messageId = id.value.reduce((n, byte) => (n << 8) | byte, 0);
  if (messageId === 0) throw c.refused(`sent a notice of disconnection (result code ${code})`);
  // RFC 4511 §4.1.1.1: a response carries its request's messageID (1, the only one sent).
  if (messageId !== 1) throw c.protocolError(`answered a request it was not sent (message ID ${messageId}, not 1)`);
  if (code !== 0) throw c.refused(`answered StartTLS with result code ${code}`);
}
