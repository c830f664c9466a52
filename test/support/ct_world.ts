/**
 * An in-process certkeeper following fixture CT logs (CERTKEEPER_CT_SOURCE=logs): the logs, a log list
 * file naming them, the harness with real transports (its CT fetcher reads the logs over loopback), the
 * follower's timings shortened, and helpers to issue certificates through the logs and wait on what
 * the API shows.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "bun:test";
import { createHarness, expectData, testPki, type Harness, type HarnessOptions, type TestKey } from "./harness.ts";
import { createTransports, type ClosableTransports } from "../../adapters/notify/mod.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import { DEFAULT_CONFIG, type Config } from "../../core/config/config.ts";
import { logListJson, startFixtureLog, type FixtureLog, type FixtureLogOptions } from "./ct_log_server.ts";
import { issueThroughCt, type CtIssued, type CtIssueOptions } from "./ct_certs.ts";
import type { Issued } from "./pki.ts";

export interface CtWorldOptions extends HarnessOptions {
  logs?: FixtureLogOptions[];
  /** Start core (the follower) at once; default true. */
  start?: boolean;
}

export interface CtWorld {
  harness: Harness;
  logs: FixtureLog[];
  /** The intermediate CA issuing through the logs (O=Let's Encrypt, CN=E7). */
  ca: Issued;
  listFile: string;
  transports: ClosableTransports;
  /** Starts core's background work (the follower among it). */
  start(): void;
  /** Issues a precertificate logged in `logs` (default all), then its certificate, logged where `certificateIn` says (default nowhere). */
  issue(options: Partial<CtIssueOptions> & { dnsNames: string[]; certificateIn?: FixtureLog[] }): Promise<CtIssued>;
  /** Publishes every log's entries as its new head. */
  publishAll(): void;
  /** GET /v1/ct/logs as the owner. */
  ctLogs(): Promise<any[]>;
  /** Waits until every listed log's position equals its head size (and that size is `size` when given). */
  caughtUp(size?: number): Promise<any[]>;
  /** Waits until `check` holds (polling), or fails naming `what`. */
  until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs?: number): Promise<T>;
  addWatch(body: Record<string, unknown>, key?: TestKey): Promise<any>;
  /** The certificate.issued events the key's scope sees, oldest first. */
  issued(key?: TestKey): Promise<any[]>;
  close(): Promise<void>;
}

/** The logs, their list, and certkeeper following them (started). */
export async function startCtWorld(options: CtWorldOptions = {}): Promise<CtWorld> {
  const { root, ecIntermediate } = await testPki();
  void ecIntermediate;
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-ct-world-"));
  const logs: FixtureLog[] = [];
  for (const logOptions of options.logs ?? [{ kind: "rfc6962" as const }, { kind: "tiled" as const }]) logs.push(await startFixtureLog(logOptions));
  const ca = await caOf(root);
  for (const log of logs) log.publish();
  const listFile = join(dir, "log_list.json");
  writeFileSync(listFile, logListJson(logs));
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: "*.certkeeper.test", address: "127.0.0.1", addresses: ["127.0.0.1"] } as never],
    tlsTimeoutMs: 1000,
    logLevel: "error",
    ctSource: "logs",
    ctLogList: listFile,
    ...options.config,
  };
  const trust = new TrustStore([root.certPem]);
  const transports = createTransports(config, trust, { outboxDir: join(dir, "outbox") });
  const harness = await createHarness({
    ...options,
    config,
    trust,
    transports,
    ctFollower: { leaseMs: 3000, headIntervalMs: 100, watchSettleMs: 50, firstBackoffMs: 100, ...options.ctFollower },
  });
  if (options.start !== false) harness.core.start();

  const world: CtWorld = {
    harness,
    logs,
    ca,
    listFile,
    transports,
    start: () => harness.core.start(),
    async issue(issueOptions) {
      const issued = await issueThroughCt({ issuer: ca, logs: issueOptions.logs ?? logs, ...issueOptions });
      for (const log of issueOptions.certificateIn ?? []) log.logCertificate(issued.certificate.rawData, issued.chain);
      return issued;
    },
    publishAll() {
      for (const log of logs) log.publish();
    },
    async ctLogs() {
      return expectData(await harness.request("GET", "/v1/ct/logs"), 200);
    },
    async caughtUp(size) {
      return world.until(`every log caught up${size === undefined ? "" : ` at ${size}`}`, async () => {
        const listed = await world.ctLogs();
        const done = listed.length === logs.length && listed.every((log: any) => log.position !== null && log.position === log.treeSize && (size === undefined || log.treeSize === size));
        return done ? listed : null;
      });
    },
    async until(what, check, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const value = await check();
        if (value) return value;
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(await world.ctLogs())}`);
        await Bun.sleep(25);
      }
    },
    async addWatch(body, key = harness.keys.owner) {
      return expectData(await harness.request("POST", "/v1/watches", { body, key: key.key }), 201);
    },
    async issued(key = harness.keys.owner) {
      const events = expectData(await harness.request("GET", "/v1/events?limit=100", { key: key.key }), 200);
      return events.filter((event: any) => event.type === "certificate.issued").reverse();
    },
    async close() {
      for (const log of logs) await log.close();
      await harness.close();
      await transports.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return world;
}

let sharedCa: Promise<Issued> | undefined;
async function caOf(root: Issued): Promise<Issued> {
  const { createIntermediateCa } = await import("./pki.ts");
  sharedCa ??= createIntermediateCa(root, { name: "CN=E7, O=Let's Encrypt, C=US" });
  return sharedCa;
}

/** Writes `logs` as the world's log list (the follower reads it again when told to). */
export function rewriteList(world: CtWorld, logs: FixtureLog[]): void {
  writeFileSync(world.listFile, logListJson(logs));
}

/** Fails unless `value` holds exactly the events' watch ids and names given, in order. */
export function expectIssued(events: any[], expected: Array<{ watchId: string; dnsNames: string[] }>): void {
  expect(events.map((event) => ({ watchId: event.data.watchId, dnsNames: event.data.dnsNames }))).toEqual(expected);
}
