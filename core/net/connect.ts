/**
 * The one way certkeeper opens a connection to a caller-chosen host: resolve (with overrides), vet
 * every address, connect to a vetted address only, all under one deadline that destroys the socket.
 * Certificate checks and HTTP notification deliveries both go through here, so the private-address
 * guard is applied at connect time, after name resolution, for both.
 */
import net from "node:net";
import tls from "node:tls";
import { NetFailure, resolveVetted, type ResolverOptions } from "./resolver.ts";

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
  const addresses = await untilAborted(resolveVetted(host, options), signal, host, port);
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
  return new Promise((resolve, reject) => {
    const socket = options.tls
      ? tls.connect({ servername: host, ...options.tls, host: address, port })
      : net.connect({ host: address, port });
    // Errors can still arrive after we settle (a peer writing after a failed handshake); a socket
    // without an error listener would take the process down with it.
    socket.on("error", () => {});
    options.onSocket?.(socket);
    let tcpConnected = false;
    const settle = (error?: NetFailure) => {
      socket.off("connect", onConnect);
      socket.off("secureConnect", onReady);
      socket.off("error", onError);
      socket.off("close", onClose);
      signal.removeEventListener("abort", onAbort);
      if (error) {
        socket.destroy();
        reject(error);
      } else {
        resolve(socket);
      }
    };
    const onConnect = () => {
      tcpConnected = true;
      if (!options.tls) settle();
    };
    const onReady = () => settle();
    const onError = (error: NodeJS.ErrnoException) => settle(classify(error, tcpConnected, host, port));
    const onClose = () =>
      settle(new NetFailure(tcpConnected ? "tls_error" : "connection_refused", `${host}:${port} closed the connection`));
    const onAbort = () => settle(timeoutFailure(host, port));
    if (signal.aborted) return onAbort();
    socket.once("connect", onConnect);
    if (options.tls) socket.once("secureConnect", onReady);
    socket.once("error", onError);
    socket.once("close", onClose);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function classify(error: NodeJS.ErrnoException, tcpConnected: boolean, host: string, port: number): NetFailure {
  const code = error.code ?? "";
  if (!tcpConnected) {
    if (code === "ETIMEDOUT") return timeoutFailure(host, port);
    return new NetFailure("connection_refused", `${host}:${port} refused the connection (${code || error.message})`);
  }
  return new NetFailure("tls_error", `TLS handshake with ${host}:${port} failed (${code || error.message})`);
}

function timeoutFailure(host: string, port: number): NetFailure {
  return new NetFailure("timeout", `${host}:${port} did not complete the connection in time`);
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, host: string, port: number): Promise<T> {
  if (signal.aborted) return Promise.reject(timeoutFailure(host, port));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(timeoutFailure(host, port));
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
