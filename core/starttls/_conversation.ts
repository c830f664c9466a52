/**
 * The plain-text part of a STARTTLS exchange, bounded: one line (or binary reply, or element waited
 * for) may hold at most MAX_REPLY bytes and the whole exchange at most MAX_EXCHANGE (a multi-line
 * reply, such as a long FTP banner, is bounded by the exchange), so a hostile server (an endless greeting, a line of
 * megabytes) costs a small buffer and, at worst, the caller's deadline, which destroys the socket.
 */
import type net from "node:net";
import { NetFailure } from "../net/resolver.ts";

/** Longest line (or binary reply) accepted: real greetings and capability lists are far shorter. */
export const MAX_REPLY = 8 * 1024;
/** Most bytes read before the upgrade, all replies together. */
export const MAX_EXCHANGE = 64 * 1024;

export class Conversation {
  #buffer: Buffer = Buffer.alloc(0);
  #received = 0;
  #closed: NetFailure | null = null;
  #wake: (() => void) | null = null;
  readonly #onData = (chunk: Buffer) => {
    this.#received += chunk.length;
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    this.#wake?.();
    if (this.#received > MAX_EXCHANGE) {
      // After a waiting reader has judged what arrived (a line too long says more than a byte count).
      queueMicrotask(() => this.#fail(this.protocolError(`sent more than ${MAX_EXCHANGE} bytes without completing the STARTTLS exchange`)));
    }
  };
  readonly #onClose = () => this.#fail(new NetFailure("tls_error", `${this.label} closed the connection during the STARTTLS exchange`));

  constructor(
    private readonly socket: net.Socket,
    /** `host:port`, for messages. */
    readonly label: string,
  ) {
    socket.on("data", this.#onData);
    socket.once("end", this.#onClose);
    socket.once("close", this.#onClose);
  }

  /** The server's answer was not the upgrade: CONTRACT §12's `starttls_refused`. */
  refused(what: string): NetFailure {
    return new NetFailure("starttls_refused", `${this.label} ${what}`);
  }

  /** The server broke the protocol. */
  protocolError(what: string): NetFailure {
    return new NetFailure("tls_error", `${this.label} ${what}`);
  }

  write(data: string | Uint8Array): void {
    this.socket.write(data);
  }

  /** The next line, without its CRLF (or LF). */
  async line(): Promise<string> {
    for (;;) {
      const end = this.#buffer.indexOf(0x0a);
      if (end >= 0) {
        if (end > MAX_REPLY) throw this.#fail(this.protocolError(`sent a line longer than ${MAX_REPLY} bytes`));
        const line = this.#buffer.subarray(0, end).toString("latin1").replace(/\r$/, "");
        this.#buffer = this.#buffer.subarray(end + 1);
        return line;
      }
      if (this.#buffer.length > MAX_REPLY) throw this.#fail(this.protocolError(`sent a line longer than ${MAX_REPLY} bytes`));
      await this.#more();
    }
  }

  /** Exactly `count` bytes (count ≤ MAX_REPLY). */
  async bytes(count: number): Promise<Buffer> {
    if (count > MAX_REPLY) throw this.#fail(this.protocolError(`announced a reply of ${count} bytes`));
    while (this.#buffer.length < count) await this.#more();
    const bytes = this.#buffer.subarray(0, count);
    this.#buffer = this.#buffer.subarray(count);
    return bytes;
  }

  /** Reads until `complete(text so far)` says the reply is whole; returns the text and consumes it. */
  async until(complete: (text: string) => number): Promise<string> {
    for (;;) {
      const text = this.#buffer.toString("utf8");
      const end = complete(text);
      if (end >= 0) {
        const reply = text.slice(0, end);
        this.#buffer = Buffer.from(text.slice(end), "utf8");
        return reply;
      }
      if (this.#buffer.length > MAX_REPLY) throw this.#fail(this.protocolError(`sent a reply longer than ${MAX_REPLY} bytes`));
      await this.#more();
    }
  }

  /**
   * Stops reading: the socket is handed to TLS. Bytes the server sent after the upgrade answer, before
   * our ClientHello, break the protocol (and could be an injection attempt, CVE-2011-0411).
   */
  release(): void {
    this.socket.pause();
    this.#detach();
    if (this.#buffer.length > 0) throw this.protocolError("sent data after accepting the upgrade, before the TLS handshake");
  }

  #detach(): void {
    this.socket.off("data", this.#onData);
    this.socket.off("end", this.#onClose);
    this.socket.off("close", this.#onClose);
  }

  #fail(failure: NetFailure): NetFailure {
    if (!this.#closed) {
      this.#closed = failure;
      this.#detach();
      this.socket.destroy();
      this.#wake?.();
    }
    return this.#closed;
  }

  #more(): Promise<void> {
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#wake = () => {
        this.#wake = null;
        if (this.#closed) reject(this.#closed);
        else resolve();
      };
    });
  }
}
