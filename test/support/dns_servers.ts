/**
 * Real DNS servers on loopback for tests: Debian's Knot DNS (authoritative, zones written by the test,
 * DNSSEC signing on demand) and Unbound (a validating resolver in front of it, for the AD bit), each
 * started in a temporary folder on free ports and stopped by the test file. Where no daemon can be
 * made to misbehave (truncation games, floods, silence, answers for other names), a fixture server
 * built on dns-packet, the library certkeeper's client uses, answers instead (checked against dig).
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import dgram from "node:dgram";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as dnsPacket from "dns-packet";

export const KNOTD = "/usr/sbin/knotd";
export const KNOTC = "/usr/sbin/knotc";
export const UNBOUND = "/usr/sbin/unbound";
export const DIG = "/usr/bin/dig";

/** Why the DNS daemons' tests cannot run here, or null when they can. */
export function dnsDaemonsMissing(): string | null {
  const missing = [KNOTD, KNOTC, UNBOUND, DIG].filter((path) => !existsSync(path));
  return missing.length === 0 ? null : `${missing.join(", ")} not installed (apt-get install knot unbound dnsutils)`;
}

/** A port free for both UDP and TCP on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  for (;;) {
    const server = net.createServer();
    const port = await new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)));
    const udp = dgram.createSocket("udp4");
    const free = await new Promise<boolean>((resolve) => {
      udp.once("error", () => resolve(false));
      udp.bind(port, "127.0.0.1", () => resolve(true));
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await new Promise<void>((resolve) => {
      try {
        udp.close(() => resolve());
      } catch {
        resolve();
      }
    });
    if (free) return port;
  }
}

/** `dig` against a server, its answer lines (`+short`), for checking fixtures and zones. */
export async function dig(port: number, type: string, name: string, extra: string[] = []): Promise<string[]> {
  const output = await digFull(port, type, name, ["+short", ...extra]);
  return output.split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

/**
 * `dig` with its whole answer, for flags (ad, tc) and status. Asynchronous: a fixture server in this
 * process must be free to answer it.
 */
export function digFull(port: number, type: string, name: string, extra: string[] = []): Promise<string> {
  return new Promise((resolve) => {
    execFile(DIG, ["+time=2", "+tries=1", "-p", String(port), "@127.0.0.1", type, name, ...extra], { encoding: "utf8" }, (_error, stdout) => resolve(stdout));
  });
}

/** `dig +short` from a synchronous context (a daemon's readiness), for servers in other processes. */
function digSync(port: number, type: string, name: string): string[] {
  const result = spawnSync(DIG, ["+short", "+time=1", "+tries=1", "-p", String(port), "@127.0.0.1", type, name], { encoding: "utf8" });
  return result.stdout.split("\n").map((line) => line.trim()).filter((line) => line !== "");
}

async function until(ready: () => boolean, what: string, process: ChildProcess, log: () => string): Promise<void> {
  const started = Date.now();
  while (!ready()) {
    if (process.exitCode !== null) throw new Error(`${what} exited (${process.exitCode}): ${log()}`);
    if (Date.now() - started > 20_000) throw new Error(`${what} did not start: ${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Daemons still running: ended with the test process, even one that stops without its afterAll. */
const running = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

function started(child: ChildProcess): ChildProcess {
  running.add(child);
  child.once("exit", () => running.delete(child));
  return child;
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export interface KnotServer {
  port: number;
  /** The zone's apex, e.g. `test.`. */
  zone: string;
  /** Replaces the zone's records (`$ORIGIN`, SOA and NS are added) and waits until the server serves them. */
  setZone(records: string): Promise<void>;
  /** The zone's DNSKEY records as `name DNSKEY …` lines (signed zones), for a resolver's trust anchor. */
  dnskeys(): string[];
  close(): Promise<void>;
}

/**
 * Knot DNS serving one zone (default `test.`) from `records`, on a free port of 127.0.0.1; `signed`
 * signs it (ECDSA P-256, keys made by Knot at start).
 */
export async function startKnot(records: string, options: { zone?: string; signed?: boolean } = {}): Promise<KnotServer> {
  const zone = options.zone ?? "test.";
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-knot-"));
  mkdirSync(join(dir, "db"));
  const port = await freePort();
  let serial = 1;
  const zoneFile = join(dir, `${zone}zone`);
  const writeZone = (text: string) =>
    writeFileSync(zoneFile, `$ORIGIN ${zone}\n$TTL 60\n@ SOA ns.${zone} hostmaster.${zone} ${serial} 3600 600 86400 60\n@ NS ns.${zone}\nns A 127.0.0.1\n${text}\n`);
  writeZone(records);
  const config = join(dir, "knot.conf");
  writeFileSync(
    config,
    [
      "server:",
      `    listen: 127.0.0.1@${port}`,
      `    rundir: ${dir}`,
      "control:",
      `    listen: ${join(dir, "knot.sock")}`,
      "database:",
      `    storage: ${join(dir, "db")}`,
      "log:",
      "  - target: stderr",
      "    any: warning",
      "policy:",
      "  - id: fast",
      "    algorithm: ecdsap256sha256",
      "    single-type-signing: on",
      "template:",
      "  - id: default",
      `    storage: ${dir}`,
      '    file: "%s.zone"',
      "    zonefile-sync: -1",
      "    zonefile-load: whole",
      "    journal-content: none",
      "    semantic-checks: off",
      "zone:",
      `  - domain: ${zone}`,
      ...(options.signed ? ["    dnssec-signing: on", "    dnssec-policy: fast"] : []),
      "",
    ].join("\n"),
  );
  let log = "";
  const child = started(spawn(KNOTD, ["-c", config], { stdio: ["ignore", "ignore", "pipe"] }));
  child.stderr!.on("data", (chunk) => (log += chunk));
  // The serial knot serves. A signed zone's is knot's own (it increments it as it signs), so the
  // serial written next is above it, and the new zone is served once the serial reaches it.
  const servedSerial = () => Math.max(-1, ...digSync(port, "SOA", zone).map((line) => Number(line.split(/\s+/)[2])).filter(Number.isFinite));
  const served = () => servedSerial() >= serial;
  await until(served, "knotd", child, () => log);
  return {
    port,
    zone,
    async setZone(text) {
      serial = Math.max(serial, servedSerial()) + 1;
      writeZone(text);
      spawnSync(KNOTC, ["-c", config, "zone-reload", zone], { encoding: "utf8" });
      await until(served, "knotd reload", child, () => log);
    },
    dnskeys: () => digSync(port, "DNSKEY", zone).map((key) => `${zone} DNSKEY ${key}`),
    async close() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface UnboundServer {
  port: number;
  close(): Promise<void>;
}

/** Unbound validating with `trustAnchors`, forwarding `zone` to a stub (the Knot server), on a free port. */
export async function startUnbound(stub: { zone: string; port: number }, trustAnchors: string[]): Promise<UnboundServer> {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-unbound-"));
  const port = await freePort();
  const config = join(dir, "unbound.conf");
  writeFileSync(
    config,
    [
      "server:",
      `    interface: 127.0.0.1@${port}`,
      `    port: ${port}`,
      "    do-daemonize: no",
      '    username: ""',
      '    chroot: ""',
      `    directory: "${dir}"`,
      '    pidfile: ""',
      "    use-syslog: no",
      "    verbosity: 0",
      "    do-not-query-localhost: no",
      "    access-control: 127.0.0.0/8 allow",
      `    local-zone: "${stub.zone}" nodefault`,
      ...trustAnchors.map((anchor) => `    trust-anchor: "${anchor}"`),
      '    module-config: "validator iterator"',
      "    qname-minimisation: no",
      "    cache-max-ttl: 0",
      "    cache-max-negative-ttl: 0",
      "stub-zone:",
      `    name: "${stub.zone}"`,
      `    stub-addr: 127.0.0.1@${stub.port}`,
      "remote-control:",
      "    control-enable: no",
      "",
    ].join("\n"),
  );
  let log = "";
  const child = started(spawn(UNBOUND, ["-d", "-c", config], { stdio: ["ignore", "pipe", "pipe"] }));
  child.stdout!.on("data", (chunk) => (log += chunk));
  child.stderr!.on("data", (chunk) => (log += chunk));
  await until(() => digSync(port, "SOA", stub.zone).length > 0, "unbound", child, () => log);
  return {
    port,
    async close() {
      await stop(child);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the fixture does with one question: an answer to send, or silence. */
export type FixtureReply = { message: Buffer } | { silent: true };

export interface FixtureDnsServer {
  port: number;
  /** Questions received so far, as `TYPE name` over `udp` or `tcp`. */
  questions(): Array<{ transport: "udp" | "tcp"; question: string }>;
  close(): Promise<void>;
}

/**
 * A DNS server on 127.0.0.1 (UDP and TCP on one port) whose answers `reply` makes, for the cases no
 * daemon serves: it sees the decoded query and its transport.
 */
export async function startFixtureDns(reply: (query: dnsPacket.DecodedPacket, transport: "udp" | "tcp") => FixtureReply): Promise<FixtureDnsServer> {
  const port = await freePort();
  const seen: Array<{ transport: "udp" | "tcp"; question: string }> = [];
  const record = (query: dnsPacket.DecodedPacket, transport: "udp" | "tcp") =>
    seen.push({ transport, question: `${query.questions?.[0]?.type} ${query.questions?.[0]?.name}` });
  const udp = dgram.createSocket("udp4");
  // A client gone before the answer makes the kernel report its port unreachable here.
  udp.on("error", () => {});
  udp.on("message", (bytes, from) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(bytes);
    } catch {
      return;
    }
    record(query, "udp");
    const answer = reply(query, "udp");
    if ("message" in answer) udp.send(answer.message, from.port, from.address);
  });
  await new Promise<void>((resolve) => udp.bind(port, "127.0.0.1", () => resolve()));
  const sockets = new Set<net.Socket>();
  const tcp = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    let buffered = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < 2 + buffered.readUInt16BE(0)) return;
      const query = dnsPacket.decode(buffered.subarray(2, 2 + buffered.readUInt16BE(0)));
      record(query, "tcp");
      const answer = reply(query, "tcp");
      if ("message" in answer) {
        const prefix = Buffer.alloc(2);
        prefix.writeUInt16BE(Math.min(answer.message.length, 0xffff));
        socket.write(Buffer.concat([prefix, answer.message]));
      }
    });
  });
  await new Promise<void>((resolve) => tcp.listen(port, "127.0.0.1", () => resolve()));
  return {
    port,
    questions: () => [...seen],
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
      await new Promise<void>((resolve) => udp.close(() => resolve()));
    },
  };
}

/** An answer to `query` (its id and question echoed) with these sections and flags. */
export function answerTo(
  query: dnsPacket.DecodedPacket,
  answers: dnsPacket.Answer[],
  options: { flags?: number; rcode?: string; question?: dnsPacket.Question; id?: number } = {},
): Buffer {
  const rcodes: Record<string, number> = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 };
  return dnsPacket.encode({
    type: "response",
    id: options.id ?? query.id,
    flags: (options.flags ?? 0) | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (rcodes[options.rcode ?? "NOERROR"] ?? 0),
    questions: [options.question ?? query.questions![0]!],
    answers,
  });
}
