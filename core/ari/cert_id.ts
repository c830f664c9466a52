/**
 * RFC 9773 §4.1's certID: base64url (no padding) of the leaf's Authority Key Identifier keyIdentifier,
 * ".", base64url (no padding) of the DER content octets of its serial number (a leading 0x00 kept).
 */
import { x509, type Certificate } from "../tls/x509.ts";

/**
 * The leaf's certID, or null when it has no Authority Key Identifier (RFC 9773: such a leaf cannot be
 * asked about).
 *
 * @example
 * ariCertId(leaf) === "aYhba4dGQEHhs3uEe6CuLN4ByNQ.AIdlQyE"; // RFC 9773's example
 */
export function ariCertId(leaf: Certificate): string | null {
  const keyId = leaf.getExtension(x509.AuthorityKeyIdentifierExtension)?.keyId;
  if (!keyId) return null;
  return `${base64url(Buffer.from(keyId, "hex"))}.${base64url(leaf.serialNumberOctets)}`;
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64url");
}
