/**
 * MySQL's TLS upgrade (client/server protocol, "SSL Handshake"): read the server's initial handshake
 * packet, check it offers CLIENT_SSL, answer with the 32-byte SSL request packet (no user name, no
 * credentials), then TLS.
 */
import type { Conversation } from "./_conversation.ts";

const CLIENT_LONG_PASSWORD = 0x1;
const CLIENT_LONG_FLAG = 0x4;
const CLIENT_PROTOCOL_41 = 0x200;
const CLIENT_SSL = 0x800;
const CLIENT_TRANSACTIONS = 0x2000;
const CLIENT_SECURE_CONNECTION = 0x8000;
const CLIENT_PLUGIN_AUTH = 0x80000;
const CAPABILITIES =
  CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_PLUGIN_AUTH;
/** utf8mb3_general_ci, known to every server version. */
const CHARSET = 0x21;

/** The SSL request packet for sequence id `sequence`: capabilities, max packet size, charset, 23 zero bytes. */
export function sslRequestPacket(sequence: number): Uint8Array {
  const packet = new Uint8Array(4 + 32);
  const view = new DataView(packet.buffer);
  packet.set([32, 0, 0, sequence & 0xff]);
  view.setUint32(4, CAPABILITIES, true);
  view.setUint32(8, 16 * 1024 * 1024, true);
  packet[12] = CHARSET;
  return packet;
}

export async function upgradeMysql(c: Conversation): Promise<void> {
  const header = await c.bytes(4);
  const length = header[0]! | (header[1]! << 8) | (header[2]! << 16);
  const payload = await c.bytes(length);
  if (payload[0] === 0xff) {
    const message = payload.subarray(3).toString("utf8").replace(/^#[0-9A-Z]{5}/, "").slice(0, 120);
    throw c.refused(`answered with an error instead of a handshake: "${message}"`);
  }
  if (payload[0] !== 10) throw c.refused(`speaks MySQL protocol version ${payload[0]}, which has no TLS`);
  const versionEnd = payload.indexOf(0, 1);
  // version string, NUL, connection id (4), auth data part 1 (8), filler (1), capabilities (lower 2 bytes)
  const at = versionEnd + 1 + 4 + 8 + 1;
  if (versionEnd < 0 || payload.length < at + 2) throw c.protocolError("sent a truncated handshake packet");
  const capabilities = payload[at]! | (payload[at + 1]! << 8);
  if ((capabilities & CLIENT_SSL) === 0) throw c.refused("does not offer TLS (no CLIENT_SSL capability)");
  c.write(sslRequestPacket(header[3]! + 1));
}
