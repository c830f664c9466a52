/**
 * Waiting for a socket to be usable under a deadline: connected (and, for TLS, handshaken), or failed
 * with a NetFailure that says why. Every connection certkeeper opens, for checks and for deliveries,
 * settles here, so a refused, timed-out or broken connection is described the same way everywhere.
 */
import type net from "node:net";
import tls from "node:tls";
import { NetFailure } from "./resolver.ts";

export interface SocketReadyOptions {
  /** Aborting it destroys the socket and fails with `timeout`. */
  signal: AbortSignal;
  /** Names the peer in refused, failed and closed messages, e.g. `example.com:443 (192.0.2.1:443)`. */
  peer: string;
  /** Names the target in the timeout message, e.g. `example.com:443`. */
  target: string;
  /** The TCP connection already stands (a TLS upgrade over a plain socket). */
  connected?: boolean;
}

/** Resolves with `socket` once it is connected (and, for TLS, handshaken); destroys it on failure or abort. */
export function socketReady<S extends net.Socket>(socket: S, options: SocketReadyOptions): Promise<S> {
  const { signal, peer, target } = options;
  const isTls = socket instanceof tls.TLSSocket;
  return new Promise((resolve, reject) => {
    // Errors can still arrive after we settle (a peer writing after a failed handshake); a socket
    // without an error listener would take the process down with it.
    socket.on("error", () => {});
    let tcpConnected = options.connected ?? false;
    const settle = (failure?: NetFailure) => {
      socket.off("connect", onConnect);
      socket.off("secureConnect", onReady);
      socket.off("error", onError);
      socket.off("close", onClose);
      signal.removeEventListener("abort", onAbort);
      if (failure) {
        socket.destroy();
        reject(failure);
      } else resolve(socket);
    };
    const onConnect = () => {
      tcpConnected = true;
      if (!isTls) settle();
    };
    const onReady = () => settle();
    const onError = (error: NodeJS.ErrnoException) => {
      const code = error.code || error.message;
      settle(
        tcpConnected
          ? new NetFailure("tls_error", `TLS handshake with ${peer} failed (${code})`)
          : error.code === "ETIMEDOUT"
            ? timeoutFailure(target)
            : new NetFailure("connection_refused", `${peer} refused the connection (${code})`),
      );
    };
    const onClose = () => settle(new NetFailure(tcpConnected ? "tls_error" : "connection_refused", `${peer} closed the connection`));
    const onAbort = () => settle(timeoutFailure(target));
    if (signal.aborted) return onAbort();
    socket.once("connect", onConnect);
    if (isTls) socket.once("secureConnect", onReady);
    socket.once("error", onError);
    socket.once("close", onClose);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** `promise`, or a `timeout` NetFailure for `target` once `signal` aborts (calling `onAbort` first). */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal, target: string, onAbort?: () => void): Promise<T> {
  if (signal.aborted) {
    onAbort?.();
    return Promise.reject(timeoutFailure(target));
  }
  return new Promise((resolve, reject) => {
    const abort = () => {
      onAbort?.();
      reject(timeoutFailure(target));
    };
    signal.addEventListener("abort", abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", abort));
  });
}

function timeoutFailure(target: string): NetFailure {
  return new NetFailure("timeout", `${target} did not complete the connection in time`);
}
