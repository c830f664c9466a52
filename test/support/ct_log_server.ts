/**
 * Certificate Transparency logs on 127.0.0.1 for tests and benches, byte for byte as the specifications
 * lay them out: an RFC 6962 log (get-sth, get-entries with a batch limit, get-proof-by-hash,
 * get-sth-consistency; MerkleTreeLeaf and extra_data) and a static-ct-api tile log (a signed-note
 * checkpoint, data tiles of TileLeaf entries, hash tiles, partial tiles at the tree's end, gzip). Each
 * can misbehave as hostile logs do: fail, rate-limit with Retry-After, hang, trickle, flood, answer
 * garbage, shrink, sign badly, or serve entries other than the ones its tree holds.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import type { Socket } from "node:net";
import { checkpoint, digitallySigned, fixtureKey, fixtureTileIndex, FixtureTree, signedTreeHead, uintBytes, vector, type FixtureKey } from "./ct_log_tree.ts";
import type { PrecertSubmission, SctSigner } from "./ct_certs.ts";

export type FixtureLogKind = "rfc6962" | "tiled";

/** What a request gets instead of the log's answer. */
export type Intercept = "hang" | "trickle" | "garbage" | "huge" | { status: number; headers?: Record<string, string>; body?: string | Buffer };

export interface FixtureLogOptions {
  kind: FixtureLogKind;
  keyType?: "ec" | "rsa";
  /** RFC 6962: the most entries one get-entries answers (default 64), cut at multiples of it as Google's logs do. */
  batchLimit?: number;
  /** Tiled: send data tiles gzip-compressed (default true). */
  gzip?: boolean;
  /** Serve HTTPS with this certificate (names like ct.certkeeper.test, resolved by the test config). */
  tls?: { cert: string; key: string; host: string };
  /** The list's description. */
  name?: string;
}

export interface Entry {
  timestampedEntry: Buffer;
  extraData: Buffer;
  tileLeaf: Buffer;
}

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();
type Der = ArrayBuffer | Uint8Array;
const bytes = (der: Der) => Buffer.from(der instanceof ArrayBuffer ? new Uint8Array(der) : der);

export class FixtureLog implements SctSigner {
  readonly kind: FixtureLogKind;
  readonly key: FixtureKey;
  readonly tree = new FixtureTree();
  readonly entries: Entry[] = [];
  /** Paths asked (with their queries), in order, and when. */
  readonly requests: string[] = [];
  readonly requestTimes: number[] = [];
  /** Answers every request this much later (a slow log). */
  delayMs = 0;
  /** The head served: size, timestamp, root (publish() moves it). */
  head = { size: 0, timestamp: 0, root: this.tree.root(0) };
  /** Answers the next requests (those matching, or every one) with something else. */
  intercepts: Array<{ match: (path: string) => boolean; answer: Intercept; times: number }> = [];
  /** Serves another entry instead of entry i (a log lying about what it holds; its tree keeps the real one). */
  readonly lies = new Map<number, Entry>();
  /** Signs heads with this key instead (a head that does not verify). */
  wrongKey: FixtureKey | null = null;
  /** Serves heads whose signature has a byte flipped. */
  badSignature = false;
  /**
   * Tiled: the log has moved on past its published head (tiles exist for every entry logged) and
   * dropped its older partial tiles, as logs may once the full tile exists.
   */
  dropPartials = false;
  url = "";
  /** Tiled: the submission prefix (the checkpoint origin without scheme). */
  readonly submissionUrl: string;
  readonly origin: string;
  readonly #options: FixtureLogOptions;
  #server: http.Server | https.Server | null = null;
  #sockets = new Set<Socket>();
  #timers = new Set<ReturnType<typeof setInterval>>();

  constructor(options: FixtureLogOptions) {
    this.#options = options;
    this.kind = options.kind;
    this.key = fixtureKey(options.keyType ?? "ec");
    const id = this.key.logId.subarray(0, 4).toString("hex");
    this.submissionUrl = `https://submit-${id}.ct.test/2026h1/`;
    this.origin = `submit-${id}.ct.test/2026h1`;
  }

  /** Logs a certificate (x509_entry); returns its index. */
  logCertificate(der: Der, chain: Der[], options: { timestamp?: number } = {}): number {
    return this.#append(0, bytes(der), null, chain.map(bytes), options.timestamp ?? Date.now()).index;
  }

  /** Logs a precertificate (precert_entry); returns its SCT. */
  logPrecertificate(submission: PrecertSubmission, options: { timestamp?: number } = {}): Buffer {
    return this.#append(1, submission.tbs, submission, submission.chain.map(bytes), options.timestamp ?? Date.now()).sct();
  }

  /** Logs a leaf_input that is not a readable entry (garbage a real log once accepted). */
  logRaw(timestampedEntry: Buffer): number {
    const index = this.entries.length;
    this.entries.push({ timestampedEntry, extraData: Buffer.alloc(0), tileLeaf: Buffer.concat([timestampedEntry, vector(Buffer.alloc(0), 2)]) });
    this.tree.push(Buffer.concat([Buffer.from([0, 0]), timestampedEntry]));
    return index;
  }

  #append(type: 0 | 1, signed: Buffer, precert: PrecertSubmission | null, chain: Buffer[], timestamp: number) {
    const index = this.entries.length;
    // static-ct-api: the SCT (and so the leaf) carries the leaf_index extension; RFC 6962 logs carry none.
    const extensions = this.kind === "tiled" ? Buffer.concat([Buffer.from([0]), vector(uintBytes(index, 5), 2)]) : Buffer.alloc(0);
    const signedEntry = type === 0 ? vector(signed, 3) : Buffer.concat([precert!.issuerKeyHash, vector(signed, 3)]);
    const timestampedEntry = Buffer.concat([uintBytes(timestamp, 8), uintBytes(type, 2), signedEntry, vector(extensions, 2)]);
    const chainList = vector(Buffer.concat(chain.map((c) => vector(Buffer.from(c), 3))), 3);
    const extraData = type === 0 ? chainList : Buffer.concat([vector(precert!.precertificate, 3), chainList]);
    const fingerprints = vector(Buffer.concat(chain.map((c) => sha256(c))), 2);
    const tileLeaf = Buffer.concat([timestampedEntry, ...(type === 1 ? [vector(precert!.precertificate, 3)] : []), fingerprints]);
    this.entries.push({ timestampedEntry, extraData, tileLeaf });
    this.tree.push(Buffer.concat([Buffer.from([0, 0]), timestampedEntry]));
    // The SCT is signed only when asked for (a precertificate's): logCertificate's callers never see
    // it, and a backlog of thousands of entries spent most of its time signing SCTs nobody read.
    const sct = () => {
      const sctInput = Buffer.concat([Buffer.from([0, 0]), uintBytes(timestamp, 8), uintBytes(type, 2), signedEntry, vector(extensions, 2)]);
      return Buffer.concat([Buffer.from([0]), this.key.logId, uintBytes(timestamp, 8), vector(extensions, 2), digitallySigned(this.key, sctInput)]);
    };
    return { index, sct };
  }

  /** Signs a head at `size` (default: every entry logged), which the log then serves. */
  publish(size = this.entries.length, timestamp = Date.now()): void {
    this.head = { size, timestamp, root: this.tree.root(size) };
  }

  /** The MerkleTreeLeaf of entry i, as served (a lie when one is set). */
  leafInput(i: number): Buffer {
    return Buffer.concat([Buffer.from([0, 0]), (this.lies.get(i) ?? this.entries[i]!).timestampedEntry]);
  }

  /** This log as Chrome's log_list.json v3 describes it. */
  listEntry(state: string = "usable"): Record<string, unknown> {
    const common = {
      description: this.#options.name ?? `certkeeper test ${this.kind} log`,
      log_id: this.key.logId.toString("base64"),
      key: this.key.spki.toString("base64"),
      mmd: 86400,
      state: { [state]: { timestamp: "2026-01-01T00:00:00Z" } },
    };
    return this.kind === "rfc6962" ? { ...common, url: this.url } : { ...common, submission_url: this.submissionUrl, monitoring_url: this.url };
  }

  /** Answers the next `times` requests whose path matches with `answer`. */
  intercept(answer: Intercept, options: { match?: RegExp; times?: number } = {}): void {
    const pattern = options.match;
    this.intercepts.push({ match: (path) => !pattern || pattern.test(path), answer, times: options.times ?? 1 });
  }

  /** Answers truthfully again: every intercept not yet used up is dropped. */
  stopIntercepting(): void {
    this.intercepts = [];
  }

  async start(): Promise<this> {
    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => this.#handle(req, res);
    const tls = this.#options.tls;
    this.#server = tls ? https.createServer({ cert: tls.cert, key: tls.key }, handler) : http.createServer(handler);
    this.#server.on("connection", (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on("close", () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, "127.0.0.1", resolve));
    const port = (this.#server.address() as AddressInfo).port;
    const prefix = this.kind === "rfc6962" ? "/logs/argon/" : "/mon/";
    this.url = `${tls ? "https" : "http"}://${tls?.host ?? "127.0.0.1"}:${port}${prefix}`;
    return this;
  }

  async close(): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.#server ? this.#server.close(() => resolve()) : resolve()));
  }

  #handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://log.test");
    const prefix = new URL(this.url).pathname;
    const path = url.pathname.startsWith(prefix) ? url.pathname.slice(prefix.length) : "";
    this.requests.push(path + url.search);
    this.requestTimes.push(Date.now());
    if (this.delayMs > 0) {
      const timer = setTimeout(() => this.#answer(res, path, url), this.delayMs);
      res.on("close", () => clearTimeout(timer));
      return;
    }
    this.#answer(res, path, url);
  }

  #answer(res: http.ServerResponse, path: string, url: URL): void {
    const intercept = this.intercepts.find((candidate) => candidate.times > 0 && candidate.match(path));
    if (intercept) {
      intercept.times--;
      this.intercepts = this.intercepts.filter((candidate) => candidate.times > 0);
      return this.#misbehave(res, intercept.answer);
    }
    try {
      const answer = this.kind === "rfc6962" ? this.#rfc6962(path, url.searchParams) : this.#tiled(path);
      if (!answer) return this.#send(res, 404, "not found\n");
      this.#send(res, 200, answer.body, answer.headers);
    } catch (error) {
      this.#send(res, 400, `${(error as Error).message}\n`);
    }
  }

  #send(res: http.ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
    res.writeHead(status, { "content-length": String(Buffer.byteLength(body)), ...headers });
    res.end(body);
  }

  #misbehave(res: http.ServerResponse, answer: Intercept): void {
    if (answer === "hang") return; // the socket stays open, silent
    if (answer === "trickle") {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      const timer = setInterval(() => res.write(" "), 100);
      this.#timers.add(timer);
      res.on("close", () => clearInterval(timer));
      return;
    }
    if (answer === "garbage") return this.#send(res, 200, Buffer.from(crypto.getRandomValues(new Uint8Array(3000))));
    if (answer === "huge") {
      // Declares more than any answer may hold, then starts sending it.
      res.writeHead(200, { "content-length": String(100 * 1024 * 1024) });
      res.write(Buffer.alloc(64 * 1024));
      return;
    }
    this.#send(res, answer.status, answer.body ?? "", answer.headers);
  }

  #signed(size: number, root: Uint8Array, timestamp: number) {
    return { key: this.wrongKey ?? this.key, size, root, timestamp };
  }

  #rfc6962(path: string, query: URLSearchParams): { body: string; headers?: Record<string, string> } | null {
    const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { "content-type": "application/json" } });
    const number = (name: string) => {
      const text = query.get(name);
      if (text === null || !/^\d+$/.test(text)) throw new Error(`${name} is required`);
      return Number(text);
    };
    if (path === "ct/v1/get-sth") {
      const { key, size, root, timestamp } = this.#signed(this.head.size, this.head.root, this.head.timestamp);
      const sth = signedTreeHead(key, size, root, timestamp);
      if (this.badSignature) sth.tree_head_signature = flipLast(sth.tree_head_signature);
      return json(sth);
    }
    if (path === "ct/v1/get-entries") {
      const start = number("start");
      const limit = this.#options.batchLimit ?? 64;
      const end = Math.min(number("end"), this.entries.length - 1, (Math.floor(start / limit) + 1) * limit - 1);
      if (start > end) throw new Error("start beyond the tree");
      const entries = [];
      for (let i = start; i <= end; i++) {
        entries.push({ leaf_input: this.leafInput(i).toString("base64"), extra_data: this.entries[i]!.extraData.toString("base64") });
      }
      return json({ entries });
    }
    if (path === "ct/v1/get-proof-by-hash") {
      const size = number("tree_size");
      const hash = Buffer.from(query.get("hash") ?? "", "base64");
      const index = this.tree.leafHashes.findIndex((leaf, i) => i < size && leaf.equals(hash));
      if (index < 0) throw new Error("no such leaf");
      return json({ leaf_index: index, audit_path: this.tree.path(index, size).map((h) => h.toString("base64")) });
    }
    if (path === "ct/v1/get-sth-consistency") {
      const first = number("first");
      const second = number("second");
      if (first > second || second > this.entries.length) throw new Error("bad sizes");
      return json({ consistency: this.tree.proof(first, second).map((h) => h.toString("base64")) });
    }
    return null;
  }

  #tiled(path: string): { body: string | Buffer; headers?: Record<string, string> } | null {
    if (path === "checkpoint") {
      const { key, size, root, timestamp } = this.#signed(this.head.size, this.head.root, this.head.timestamp);
      let note = checkpoint(key, this.origin, size, root, timestamp);
      if (this.badSignature) {
        const at = note.lastIndexOf(" ") + 1;
        note = note.slice(0, at) + flipLast(note.slice(at, -1)) + "\n";
      }
      return { body: note, headers: { "content-type": "text/plain; charset=utf-8" } };
    }
    const match = /^tile\/(data|[0-5])\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d{1,3}))?$/.exec(path);
    if (!match) return null;
    const index = Number(match[2]!.replace(/x/g, "").replace(/\//g, ""));
    if (fixtureTileIndex(index) !== match[2]) return null;
    const width = match[3] ? Number(match[3]) : 256;
    if (width < 1 || width > 256 || (match[3] && width === 256)) return null;
    const level = match[1] === "data" ? 0 : Number(match[1]);
    // Tiles exist up to the published head; a log that dropped partials has moved on to every entry
    // logged, and serves a partial tile only at its current end.
    const available = Math.floor((this.dropPartials ? this.entries.length : this.head.size) / 256 ** level);
    if (index * 256 + width > available) return null;
    if (match[3] && this.dropPartials && index * 256 + width !== available) return null;
    if (match[1] !== "data") return { body: this.tree.hashTile(level, index, width), headers: { "content-type": "application/octet-stream" } };
    const leaves: Buffer[] = [];
    for (let i = index * 256; i < index * 256 + width; i++) {
      leaves.push((this.lies.get(i) ?? this.entries[i]!).tileLeaf);
    }
    const body = Buffer.concat(leaves);
    if (this.#options.gzip === false) return { body, headers: { "content-type": "application/octet-stream" } };
    return { body: gzipSync(body), headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" } };
  }
}

/** Base64 of the same bytes with the last one flipped. */
function flipLast(base64: string): string {
  const bytes = Buffer.from(base64, "base64");
  bytes[bytes.length - 1]! ^= 0x01;
  return bytes.toString("base64");
}

/** Starts a fixture log. */
export async function startFixtureLog(options: FixtureLogOptions): Promise<FixtureLog> {
  return new FixtureLog(options).start();
}

/** A log list (Chrome's log_list.json v3) naming `logs`, under one operator. */
export function logListJson(logs: Array<FixtureLog | Record<string, unknown>>): string {
  const entries = logs.map((log) => (log instanceof FixtureLog ? { kind: log.kind, entry: log.listEntry() } : { kind: "rfc6962", entry: log }));
  return JSON.stringify({
    version: "1.0",
    log_list_timestamp: "2026-01-01T00:00:00Z",
    operators: [
      {
        name: "certkeeper tests",
        email: ["ct@certkeeper.test"],
        logs: entries.filter((e) => e.kind === "rfc6962").map((e) => e.entry),
        tiled_logs: entries.filter((e) => e.kind === "tiled").map((e) => e.entry),
      },
    ],
  });
}
