/**
 * Retrieves the certificate chain from every address behind a name (CONTRACT §11), concurrently and
 * under one deadline, with SNI for the domain; speaks a STARTTLS protocol first when asked (§12), and
 * accepts TLS 1.0 and 1.1 handshakes so that such servers are still watched (§13).
 */
import net, { isIP } from "node:net";
import tls, { createSecureContext, type SecureContext, type TLSSocket } from "node:tls";
import { NetFailure, type ResolverOptions } from "../net/resolver.ts";
import { socketReady, untilAborted } from "../net/socket_ready.ts";
import { hostPort } from "../net/address_policy.ts";
import { deadline, preciseNow } from "../net/deadline.ts";
import type { NetFailureReason, Protocol, TlsConnection } from "../base/records.ts";
import { endpointAddresses, type EndpointAddress } from "../net/endpoint_addresses.ts";
import type { Connections } from "../net/connection_budget.ts";
import { upgrade } from "../starttls/mod.ts";
import { chainOf, INERT_TRUST_ANCHOR, type RetrievedChain } from "./certificate_retrieve.ts";

export interface EndpointRetrieveOptions extends ResolverOptions {
  timeoutMs: number;
  /** Default `tls`. */
  protocol?: Protocol;
  /** A host name or IP literal to resolve and connect to instead of the domain (CONTRACT §11). */
  connectTo?: string | null;
  /** Connections to take before connecting (one per address); waiting for them is not timed. */
  connections?: Connections;
  /** Gives up waiting for connections (throws CheckCancelled): the process is stopping. */
  cancel?: AbortSignal;
  /** Who opens the connections once the addresses are known and the budget taken; default: this thread. */
  connector?: EndpointConnector;
}

/** The addresses of one check, resolved and vetted, with the moment its time limit ends. */
export interface EndpointsRequest {
  /** IP literals the private-address rule allows (refused ones never reach a connector). */
  addresses: Array<Omit<EndpointAddress, "refused">>;
  /** The name the addresses came from (`connectTo` or the domain), for messages. */
  host: string;
  /** SNI and the name in messages. */
  domain: string;
  port: number;
  protocol: Protocol;
  /**
   * When the check's time limit ends, on preciseNow()'s clock: a moment, not a duration, so that the
   * time a request waits for another thread to take it counts.
   */
  dueAt: number;
}

/**
 * Opens a check's connections and reads each address's chain: the handshakes, the bulk of a check's
 * CPU. Plain data in, plain data out, so it can run on another thread (adapters/check_threads).
 */
export interface EndpointConnector {
  connect(request: EndpointsRequest): Promise<EndpointRetrieval[]>;
}


/** A check that gave up before connecting because its process is stopping: it has no result to save. */
export class CheckCancelled extends Error {
  constructor(target: string) {
    super(`the check of ${target} was cancelled before it connected: certkeeper is stopping`);
    this.name = "CheckCancelled";
  }
}

export type EndpointRetrieval =
  | { address: string; ok: true; chain: RetrievedChain; tls: TlsConnection }
  | { address: string; ok: false; reason: NetFailureReason; message: string };

let context: SecureContext | undefined;

/** One context for every check; TLS 1.0 and 1.1 allowed (BoringSSL and OpenSSL both still speak them). */
function secureContext(): SecureContext {
  return (context ??= createSecureContext({ ca: [INERT_TRUST_ANCHOR], minVersion: "TLSv1" }));
}

/**
 * Every address of `connectTo ?? domain`, each with its chain or why it gave none. Throws NetFailure
 * `dns_error` (or `timeout`) when the name gives no address at all.
 */
export async function retrieveEndpoints(domain: string, port: number, options: EndpointRetrieveOptions): Promise<EndpointRetrieval[]> {
  const started = performance.now();
  // A timer cleared when the check is done: an AbortSignal.timeout would still fire (and build its
  // error) seconds after every check, for nobody.
  let limit = deadline(options.timeoutMs);
  try {
    const host = options.connectTo ?? domain;
    const addresses = await untilAborted(endpointAddresses(host, options), limit.signal, `${host}:${port}`);
    if (addresses.length === 0) throw new NetFailure("dns_error", `${host} has no addresses`);
    const budget = options.connections;
    const connecting = budget ? addresses.filter((address) => !address.refused).length : 0;
    let release = connecting > 0 ? budget!.tryAcquire(connecting) : null;
    if (connecting > 0 && !release) {
      const waitFrom = performance.now();
      try {
        release = await budget!.acquire(connecting, options.cancel);
      } catch {
        throw new CheckCancelled(`${domain}:${port}`);
      }
      // The time limit is the network's: what resolving took counts, the wait for connections does not.
      limit.clear();
      limit = deadline(Math.max(0, options.timeoutMs - (waitFrom - started)));
    }
    try {
      const protocol = options.protocol ?? "tls";
      if (!options.connector) return await connectEach({ addresses, host, domain, port, protocol }, limit.signal);
      // The connector keeps the time limit from here on; this thread's timer stops with it.
      const dueAt = performance.timeOrigin + limit.dueAt;
      limit.clear();
      return await connectElsewhere(options.connector, addresses, { host, domain, port, protocol, dueAt });
    } finally {
      release?.();
    }
  } finally {
    limit.clear();
  }
}

/**
 * Hands the allowed addresses to `connector`; a refused address is answered here, so the private-address
 * rule holds whatever the connector does.
 */
async function connectElsewhere(
  connector: EndpointConnector,
  addresses: EndpointAddress[],
  request: Omit<EndpointsRequest, "addresses">,
): Promise<EndpointRetrieval[]> {
  const allowed = addresses.filter((address) => !address.refused);
  const reached = allowed.length > 0 ? await connector.connect({ ...request, addresses: allowed.map(({ address, family }) => ({ address, family })) }) : [];
  let next = 0;
  return addresses.map((address) => (address.refused ? refusedRetrieval(request.host, address.address, address.refused) : reached[next++]!));
}

/** Connects to every address of `request` on this thread, under its time limit. */
export async function connectEndpoints(request: EndpointsRequest): Promise<EndpointRetrieval[]> {
  const limit = deadline(Math.max(0, request.dueAt - preciseNow()));
  try {
    return await connectEach({ ...request, addresses: request.addresses.map(literalOnly) }, limit.signal);
  } finally {
    limit.clear();
  }
}

/** Only IP literals are connected to: a name here would be resolved unvetted, past the private-address rule. */
function literalOnly({ address, family }: Omit<EndpointAddress, "refused">): EndpointAddress {
  return { address, family, refused: isIP(address) === family ? null : "a name where an IP address was expected" };
}

function refusedRetrieval(host: string, address: string, refused: string): EndpointRetrieval {
  // The kind of address, not the address: callers must not map the server's network through us.
  return { address, ok: false, reason: "connection_refused", message: `${host} resolves to ${refused}, which certkeeper does not connect to` };
}

function connectEach(
  { addresses, host, domain, port, protocol }: Omit<EndpointsRequest, "dueAt" | "addresses"> & { addresses: EndpointAddress[] },
  signal: AbortSignal,
): Promise<EndpointRetrieval[]> {
  return Promise.all(
    addresses.map(async ({ address, family, refused }): Promise<EndpointRetrieval> => {
      if (refused) return refusedRetrieval(host, address, refused);
      try {
        return { address, ok: true, ...(await retrieveFrom(address, family, domain, port, protocol, signal)) };
      } catch (error) {
        if (!(error instanceof NetFailure)) throw error;
        return { address, ok: false, reason: error.reason, message: error.message };
      }
    }),
  );
}

async function retrieveFrom(address: string, family: 4 | 6, domain: string, port: number, protocol: Protocol, signal: AbortSignal) {
  const label = `${domain}:${port}`;
  const ready = { signal, peer: `${label} (${hostPort(address, port)})`, target: label };
  let socket: TLSSocket;
  if (protocol === "tls") {
    socket = await socketReady(stapling(tls.connect({ host: address, port, servername: domain, secureContext: secureContext(), rejectUnauthorized: false, requestOCSP: true })), ready);
  } else {
    const plain = await socketReady(net.connect({ host: address, port }), ready);
    try {
      await untilAborted(upgrade(protocol, plain, { domain, label }), signal, label, () => plain.destroy());
    } catch (error) {
      plain.destroy();
      throw error;
    }
    socket = await socketReady(
      stapling(tls.connect({ socket: plain, servername: domain, secureContext: secureContext(), rejectUnauthorized: false, requestOCSP: true })),
      { ...ready, connected: true },
    );
  }
  try {
    const found = chainOf(socket.getPeerCertificate(true), domain, port);
    const stapled = staples.get(socket);
    const chain = stapled ? { ...found, stapled } : found;
    return { chain, tls: { protocol: socket.getProtocol() ?? "unknown", cipher: socket.getCipher()?.name ?? "unknown" } };
  } finally {
    socket.destroy();
  }
}

/** The OCSP answer each socket's server stapled (Node emits 'OCSPResponse'; Bun 1.4 never does). */
const staples = new WeakMap<TLSSocket, Uint8Array>();

function stapling(socket: TLSSocket): TLSSocket {
  socket.once("OCSPResponse", (response: Buffer) => {
    if (response?.length) staples.set(socket, new Uint8Array(response));
  });
  return socket;
}

