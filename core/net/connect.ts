/**
 * The one way certkeeper opens a connection to a caller-chosen host: resolve (with overrides), vet
 * every address, connect to a vetted address only, all under one deadline that destroys the socket.
 * Certificate checks and HTTP notification deliveries both go through here, so the private-address
 * guard is applied at connect time, after name resolution, for both.
 */
import net from "node:net";
import tls from "node:tls";
import { NetFailure, resolveVetted, type ResolverOptions } from "./resolver.ts";
import { socketReady, untilAborted } from "./socket_ready.ts";
import { hostPort } from "./address_policy.ts";

export interface ConnectOptions extends ResolverOptions {
  host: string;
  port: number;
  /** TLS options; omitted: a plain TCP connection. `servername` defaults to `host`. */
  tls?: tls.ConnectionOptions;
  /** Aborting it destroys the socket and fails with `timeout`. */
  signal: AbortSignal;
  /** Called with each socket as it is created, before it connects (to listen for early events). */
  onSocket?: (socket: net.Socket) => void;
}

/** Resolves, vets and connects; the socket is connected (and handshaken, with TLS) when it resolves. */
export async function connectGuarded(options: ConnectOptions): Promise<net.Socket> {
  const { host, port, signal } = options;
  const addresses = await untilAborted(resolveVetted(host, options), signal, hostPort(host, port));
  let lastFailure: NetFailure | undefined;
  for (const { address } of addresses) {
    try {
      return await connectAddress(address, options);
    } catch (error) {
      if (!(error instanceof NetFailure) || error.reason !== "connection_refused" || signal.aborted) throw error;
      lastFailure = error; // try the next address the name resolves to
    }
  }
  throw lastFailure ?? new NetFailure("dns_error", `${host} has no addresses`);
}

function connectAddress(address: string, options: ConnectOptions): Promise<net.Socket> {
  const { host, port, signal } = options;
  const socket = options.tls
    ? tls.connect({ servername: host, ...options.tls, host: address, port })
    : net.connect({ host: address, port });
  options.onSocket?.(socket);
  return socketReady(socket, { signal, peer: hostPort(host, port), target: hostPort(host, port) });
}
