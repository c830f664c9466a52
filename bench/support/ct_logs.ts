/**
 * The CT logs of bench:ct, in a process of their own: an RFC 6962 log (get-entries in batches of 256)
 * and a static-ct-api tile log (gzip data tiles), each of `--entries` entries laid out byte for byte as
 * the test fixtures lay them out (test/support/ct_log_*.ts), drawn from real-shaped issuances of the
 * test PKI: precertificates and their certificates with embedded SCTs, RSA and ECDSA, of 1 to 100
 * names. One issuance in `--match-every` entries names a watched domain (`app.w<i>.bench.example`,
 * i < 10,000), each only once; the rest name nobody's.
 *
 * Each log is served under two prefixes with heads of their own: `/follow/…` for certkeeper and
 * `/floor/…` for the bare loop, so one can be read while the other still shows an empty tree.
 * Every full batch's answer is rendered at the start (about 4 KB of this process's memory an entry:
 * 4 GB for a million entries a log). Heads are set by `POST /control/publish?prefix=follow&size=N`;
 * `GET /control/stats` tells the bytes sent per prefix and when entries were first asked for. Prints
 * `{ port, list: { follow, floor } }` (the two log lists' JSON) when ready.
 *
 *   bun bench/support/ct_logs.ts --entries 100000 [--match-every 10000]
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { createHash } from "node:crypto";
import { parseArgs } from "node:util";
import { checkpoint, fixtureKey, fixtureTileIndex, FixtureTree, signedTreeHead, uintBytes, vector, type FixtureKey } from "../../test/support/ct_log_tree.ts";
import { FixtureLog } from "../../test/support/ct_log_server.ts";
import { issueThroughCt, type CtIssued } from "../../test/support/ct_certs.ts";
import { createIntermediateCa, createRootCa } from "../../test/support/pki.ts";

const { values } = parseArgs({ options: { entries: { type: "string", default: "20000" }, "match-every": { type: "string", default: "10000" } } });
const ENTRIES = Number(values.entries);
const MATCH_EVERY = Number(values["match-every"]);
export const WATCHES = 10_000;

const sha256 = (data: Uint8Array) => createHash("sha256").update(data).digest();

/** One loggable thing: a certificate (type 0) or a precertificate (type 1). */
interface Item {
  type: 0 | 1;
  signed: Buffer;
  issuerKeyHash: Buffer;
  precertificate: Buffer | null;
  chain: Buffer[];
}

function items(issued: CtIssued): Item[] {
  const chain = issued.chain;
  return [
    { type: 1, signed: issued.submission.tbs, issuerKeyHash: issued.submission.issuerKeyHash, precertificate: issued.submission.precertificate, chain },
    { type: 0, signed: Buffer.from(issued.certificate.rawData), issuerKeyHash: Buffer.alloc(0), precertificate: null, chain },
  ];
}

// Issuances of the test PKI, of several shapes; SCTs from throwaway logs, as a CA embeds them.
const root = await createRootCa({ keyType: "rsa" });
const cas = [await createIntermediateCa(root, { keyType: "rsa", name: "CN=R11, O=Let's Encrypt, C=US" }), await createIntermediateCa(root, { keyType: "ec", name: "CN=E7, O=Let's Encrypt, C=US" })];
const signers = [new FixtureLog({ kind: "rfc6962" }), new FixtureLog({ kind: "tiled" })];
const NAME_COUNTS = [1, 2, 3, 5, 10, 40, 100];
const filler: Item[] = [];
for (let i = 0; i < 40; i++) {
  const count = NAME_COUNTS[i % NAME_COUNTS.length]!;
  const names = Array.from({ length: count }, (_, k) => `host${k}.site${i}.example`);
  const issued = await issueThroughCt({ issuer: cas[i % 2]!, dnsNames: names, keyType: i % 3 === 0 ? "rsa" : "ec", logs: signers });
  filler.push(...items(issued));
}
const matching: Item[] = [];
for (let m = 0; m * MATCH_EVERY + MATCH_EVERY / 2 < ENTRIES; m++) {
  const watch = (m * 7919) % WATCHES;
  const issued = await issueThroughCt({ issuer: cas[m % 2]!, dnsNames: [`app.w${watch}.bench.example`, `www.app.w${watch}.bench.example`], logs: signers });
  matching.push(items(issued)[m % 2]!);
}

/** Entry i: a matching issuance once every MATCH_EVERY entries, else a filler item. */
const itemAt = (i: number): Item => (i % MATCH_EVERY === MATCH_EVERY / 2 ? matching[Math.floor(i / MATCH_EVERY)]! : filler[(i * 31) % filler.length]!);
// Logged half an hour ago, after the watches were created (an hour ago), a thousand entries a millisecond.
const BASE_TIME = Date.now() - 1_800_000;

class BenchLog {
  readonly key: FixtureKey;
  readonly tree = new FixtureTree();
  readonly heads = new Map<string, { size: number; timestamp: number; root: Buffer }>();
  readonly sent = new Map<string, number>();
  /** When each prefix was first asked for entries since its last publication (ms since the epoch). */
  readonly firstEntriesAt = new Map<string, number>();
  /**
   * Every full batch's answer (get-entries of 256 entries, or a gzip data tile), rendered before any is
   * asked for: in real use the logs are elsewhere, and rendering them here while certkeeper reads would
   * take this machine's CPU from the API whose latency the benchmark measures. Other answers (a partial
   * tile, a batch not aligned on 256) are rendered when asked.
   */
  readonly #batches: Buffer[] = [];
  readonly origin: string;

  constructor(readonly kind: "rfc6962" | "tiled") {
    this.key = fixtureKey("ec");
    this.origin = `bench-${kind}.ct.test/2026`;
    for (let i = 0; i < ENTRIES; i++) this.tree.push(Buffer.concat([Buffer.from([0, 0]), this.timestampedEntry(i)]));
    for (const prefix of ["follow", "floor"]) this.heads.set(prefix, { size: 0, timestamp: BASE_TIME, root: this.tree.root(0) });
    for (let start = 0; start < ENTRIES; start += 256) {
      const end = Math.min(start + 255, ENTRIES - 1);
      if (kind === "rfc6962") this.#batches.push(this.entriesJson(start, end));
      else if (end === start + 255) this.#batches.push(this.dataTile(start / 256, 256));
    }
  }

  entriesJson(start: number, end: number): Buffer {
    const entries = [];
    for (let i = start; i <= end; i++) {
      entries.push({ leaf_input: Buffer.concat([Buffer.from([0, 0]), this.timestampedEntry(i)]).toString("base64"), extra_data: this.extraData(i).toString("base64") });
    }
    return Buffer.from(JSON.stringify({ entries }));
  }

  dataTile(index: number, width: number): Buffer {
    const leaves: Buffer[] = [];
    for (let i = index * 256; i < index * 256 + width; i++) leaves.push(this.tileLeaf(i));
    return gzipSync(Buffer.concat(leaves), { level: 1 });
  }

  timestampedEntry(i: number): Buffer {
    const item = itemAt(i);
    const extensions = this.kind === "tiled" ? Buffer.concat([Buffer.from([0]), vector(uintBytes(i, 5), 2)]) : Buffer.alloc(0);
    const signedEntry = item.type === 0 ? vector(item.signed, 3) : Buffer.concat([item.issuerKeyHash, vector(item.signed, 3)]);
    return Buffer.concat([uintBytes(BASE_TIME + Math.floor(i / 1000), 8), uintBytes(item.type, 2), signedEntry, vector(extensions, 2)]);
  }

  tileLeaf(i: number): Buffer {
    const item = itemAt(i);
    const fingerprints = vector(Buffer.concat(item.chain.map(sha256)), 2);
    return Buffer.concat([this.timestampedEntry(i), ...(item.type === 1 ? [vector(item.precertificate!, 3)] : []), fingerprints]);
  }

  extraData(i: number): Buffer {
    const item = itemAt(i);
    const chain = vector(Buffer.concat(item.chain.map((c) => vector(c, 3))), 3);
    return item.type === 0 ? chain : Buffer.concat([vector(item.precertificate!, 3), chain]);
  }

  publish(prefix: string, size: number): void {
    this.heads.set(prefix, { size, timestamp: Date.now(), root: this.tree.root(size) });
  }

  listEntry(url: string): Record<string, unknown> {
    const common = { description: `bench ${this.kind}`, log_id: this.key.logId.toString("base64"), key: this.key.spki.toString("base64"), mmd: 86400, state: { usable: { timestamp: "2026-01-01T00:00:00Z" } } };
    return this.kind === "rfc6962" ? { ...common, url } : { ...common, submission_url: `https://${this.origin}/`, monitoring_url: url };
  }

  answer(prefix: string, path: string, query: URLSearchParams): { body: string | Buffer; headers: Record<string, string> } | null {
    const head = this.heads.get(prefix)!;
    const json = (value: unknown) => ({ body: JSON.stringify(value), headers: { "content-type": "application/json" } });
    if (this.kind === "rfc6962") {
      if (path === "ct/v1/get-sth") return json(signedTreeHead(this.key, head.size, head.root, head.timestamp));
      if (path === "ct/v1/get-entries") {
        const start = Number(query.get("start"));
        const end = Math.min(Number(query.get("end")), head.size - 1, (Math.floor(start / 256) + 1) * 256 - 1);
        const body = start % 256 === 0 && end === Math.min(start + 255, ENTRIES - 1) ? this.#batches[start / 256] : undefined;
        return { body: body ?? this.entriesJson(start, end), headers: { "content-type": "application/json" } };
      }
      if (path === "ct/v1/get-sth-consistency") {
        return json({ consistency: this.tree.proof(Number(query.get("first")), Number(query.get("second"))).map((h) => h.toString("base64")) });
      }
      return null;
    }
    if (path === "checkpoint") return { body: checkpoint(this.key, this.origin, head.size, head.root, head.timestamp), headers: { "content-type": "text/plain" } };
    const match = /^tile\/(data|[0-5])\/((?:x\d{3}\/)*\d{3})(?:\.p\/(\d{1,3}))?$/.exec(path);
    if (!match) return null;
    const index = Number(match[2]!.replace(/[x/]/g, ""));
    const width = match[3] ? Number(match[3]) : 256;
    const level = match[1] === "data" ? 0 : Number(match[1]);
    if (fixtureTileIndex(index) !== match[2] || index * 256 + width > Math.floor(head.size / 256 ** level)) return null;
    if (match[1] !== "data") return { body: this.tree.hashTile(level, index, width), headers: { "content-type": "application/octet-stream" } };
    const tile = (width === 256 ? this.#batches[index] : undefined) ?? this.dataTile(index, width);
    return { body: tile, headers: { "content-type": "application/octet-stream", "content-encoding": "gzip" } };
  }
}

const logs = { rfc6962: new BenchLog("rfc6962"), tiled: new BenchLog("tiled") };
const server = http.createServer((req, res) => {
  const url = new URL(req.url ?? "/", "http://bench.test");
  const [, prefix, kind, ...rest] = url.pathname.split("/");
  if (prefix === "control") {
    if (kind === "publish") {
      const size = Number(url.searchParams.get("size"));
      for (const log of Object.values(logs)) {
        log.publish(url.searchParams.get("prefix")!, size);
        log.firstEntriesAt.delete(url.searchParams.get("prefix")!);
      }
      return res.end("ok");
    }
    const stats = Object.fromEntries(
      Object.entries(logs).map(([name, log]) => [name, { sent: Object.fromEntries(log.sent), firstEntriesAt: Object.fromEntries(log.firstEntriesAt) }]),
    );
    return res.end(JSON.stringify(stats));
  }
  const log = logs[kind as keyof typeof logs];
  const answer = log && (prefix === "follow" || prefix === "floor") ? log.answer(prefix, rest.join("/"), url.searchParams) : null;
  if (!answer) {
    res.writeHead(404);
    return res.end();
  }
  const bytes = Buffer.byteLength(answer.body);
  if (/get-entries|tile\/data/.test(url.pathname) && !log!.firstEntriesAt.has(prefix!)) log!.firstEntriesAt.set(prefix!, Date.now());
  log!.sent.set(prefix!, (log!.sent.get(prefix!) ?? 0) + bytes);
  res.writeHead(200, { "content-length": String(bytes), ...answer.headers });
  res.end(answer.body);
});
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
const port = (server.address() as AddressInfo).port;
const list = (prefix: string) =>
  JSON.stringify({
    operators: [
      {
        name: "bench",
        logs: [logs.rfc6962.listEntry(`http://127.0.0.1:${port}/${prefix}/rfc6962/`)],
        tiled_logs: [logs.tiled.listEntry(`http://127.0.0.1:${port}/${prefix}/tiled/`)],
      },
    ],
  });
console.log(JSON.stringify({ port, list: { follow: list("follow"), floor: list("floor") }, matching: matching.length }));
