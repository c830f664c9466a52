/** Reads the certificate chain a TLS server sends, exactly as sent, under one hard deadline. */
import { createHash } from "node:crypto";
import { createSecureContext, type PeerCertificate, type SecureContext, type TLSSocket } from "node:tls";
import { connectGuarded } from "../net/connect.ts";
import { NetFailure, type ResolverOptions } from "../net/resolver.ts";

/** The DER certificates a server sent, leaf first, and a fingerprint of the whole chain. */
export interface RetrievedChain {
  ders: Uint8Array[];
  /** SHA-256 over the chain: unchanged chain, unchanged fingerprint, so parsing can be skipped. */
  fingerprint: string;
  /**
   * The OCSP response the server stapled, when the TLS client hands it over (Node emits
   * 'OCSPResponse'; Bun 1.4's node:tls never does, so under Bun this is always absent).
   */
  stapled?: Uint8Array;
}

export interface RetrieveOptions extends ResolverOptions {
  timeoutMs: number;
}

/** No server presents a chain that ends in this anchor; see INERT_TRUST_ANCHOR's use below. */
export const INERT_TRUST_ANCHOR = `-----BEGIN CERTIFICATE-----
MIIByjCCAXGgAwIBAgIUDKB+K3qNL1c0nB283SGNOPcUp8kwCgYIKoZIzj0EAwIw
OjE4MDYGA1UEAwwvY2VydGtlZXBlciBpbmVydCB0cnVzdCBhbmNob3IgKG1hdGNo
ZXMgbm90aGluZykwIBcNMjYxMTIwMjM0NzMxWhgPMjEyNjEwMjcyMzQ3MzFaMDox
ODA2BgNVBAMML2NlcnRrZWVwZXIgaW5lcnQgdHJ1c3QgYW5jaG9yIChtYXRjaGVz
IG5vdGhpbmcpMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEY3JIG8XRJ1LEellb
TJxx4InsZuO1DF05ea0Dl0fTniiA3f2S8t/WmeYIKq3wmnmgrQyTm0KMNLtMFsXZ
95oe1aNTMFEwHQYDVR0OBBYEFM+WK69IR6biuHPOt1KQ0GIxpCy+MB8GA1UdIwQY
MBaAFM+WK69IR6biuHPOt1KQ0GIxpCy+MA8GA1UdEwEB/wQFMAMBAf8wCgYIKoZI
zj0EAwIDRwAwRAIgYWE8Gokz5gPXOYaxr4bLOv33lg5u7gte8KnGdppwE1cCIFfh
JNlfcqn9BHN2jtH/8r4hXdaJOshk03En59x7T3aD
-----END CERTIFICATE-----`;

let inertContext: SecureContext | undefined;

/**
 * A server sends a handful of certificates; past this many the rest are not read (the path search has
 * its own budget of signature checks, whatever is sent).
 */
const MAX_CHAIN_LENGTH = 32;

/**
 * Connects to `domain:port` with the domain as SNI and returns the chain it sent. Trust is judged
 * separately (chain_verify.ts), so the handshake accepts any certificate: expired, self-signed and
 * wrong-host certificates are read like any other. The handshake's trust store holds only an inert
 * anchor, because the TLS library completes the peer chain from its store: with the system roots
 * there, `getPeerCertificate(true)` would report a root the server never sent.
 */
export async function retrieveChain(domain: string, port: number, options: RetrieveOptions): Promise<RetrievedChain> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  let stapled: Uint8Array | undefined;
  const socket = (await connectGuarded({
    ...options,
    host: domain,
    port,
    signal,
    // One context for every check: building one per connection (parsing the anchor, the ciphers) costs
    // a measurable share of a handshake. requestOCSP asks the server to staple its OCSP answer.
    tls: { rejectUnauthorized: false, requestOCSP: true, secureContext: (inertContext ??= createSecureContext({ ca: [INERT_TRUST_ANCHOR] })) },
    onSocket: (created) => created.once("OCSPResponse", (response: Buffer) => (stapled = response?.length ? new Uint8Array(response) : undefined)),
  })) as TLSSocket;
  try {
    const chain = chainOf(socket.getPeerCertificate(true), domain, port);
    return stapled ? { ...chain, stapled } : chain;
  } finally {
    socket.destroy();
  }
}

export function chainOf(peer: PeerCertificate | undefined, domain: string, port: number): RetrievedChain {
  const ders: Uint8Array[] = [];
  const fingerprints: string[] = [];
  // The certificates as sent, linked in order; the link is circular at the last one when it is
  // self-signed (it names itself). A certificate sent twice (a cert file and a full chain concatenated)
  // is another object, read like any other: what follows it is part of the chain too.
  const read = new Set<PeerCertificate>();
  let current: PeerCertificate | undefined = peer;
  while (current?.raw && !read.has(current) && ders.length < MAX_CHAIN_LENGTH) {
    read.add(current);
    // The TLS layer has already computed each certificate's SHA-256; hashing the chain again would
    // cost more than the rest of a re-check's bookkeeping.
    fingerprints.push(current.fingerprint256 || createHash("sha256").update(current.raw).digest("hex"));
    ders.push(current.raw);
    current = (current as { issuerCertificate?: PeerCertificate }).issuerCertificate;
  }
  if (ders.length === 0) throw new NetFailure("tls_error", `${domain}:${port} completed a handshake without a certificate`);
  return { ders, fingerprint: fingerprints.join("/") };
}
