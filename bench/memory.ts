/**
 * Benchmark (c): the resident memory of a server process holding 100,000 certificates (idle, after
 * listing them all through the API, after a /metrics scrape), beside the same server on an empty
 * database (the floor), and the time to list all 100,000 page by page with GET /v1/certificates.
 *
 *   bun bench/memory.ts [--certificates 100000] [--page 100]
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "@libsql/client";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { CERTIFICATE_COLUMNS, certificateValues } from "../adapters/sql/rows.ts";
import { sampleCertificate } from "./support/sample.ts";

const { values } = parseArgs({ options: { certificates: { type: "string", default: "100000" }, page: { type: "string", default: "100" } } });
const total = Number(values.certificates);
const pageSize = Number(values.page);
const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const METRICS_TOKEN = "bench-metrics-token";

/** A database with one organization, a key, and `count` certificates, written in bulk. */
async function database(name: string, count: number): Promise<{ url: string; key: string }> {
  const url = `file:${join(dir, `${name}.db`)}`;
  const store = await openLibsqlStore({ url });
  const admin = new Admin(store, systemClock);
  const org = await admin.createOrganization({ name, plan: "enterprise", limits: { requestsPerMinute: 1_000_000_000, certificates: 1_000_000 } });
  const user = await admin.createUser({ organizationId: org.id, email: `${name}@bench.test`, role: "owner" });
  const { key } = await admin.createApiKey({ userId: user.id, name, mode: "live" });
  await store.close();
  // Bulk rows with the SQL store's own column mapping: adding 100,000 through the API would be a
  // benchmark of adds (each counts the plan's certificates) rather than of holding them.
  const client = createClient({ url });
  const rowsPerStatement = 400;
  for (let start = 0; start < count; start += rowsPerStatement) {
    const rows = Array.from({ length: Math.min(rowsPerStatement, count - start) }, (_, i) => sampleCertificate({ organizationId: org.id, mode: "live" }, start + i));
    const width = CERTIFICATE_COLUMNS.split(",").length;
    await client.execute({
      sql: `INSERT INTO certificates (${CERTIFICATE_COLUMNS}) VALUES ${rows.map(() => `(${Array(width).fill("?").join(", ")})`).join(", ")}`,
      args: rows.flatMap((r) => certificateValues(r)),
    });
  }
  client.close();
  return { url, key };
}

interface Server {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

async function serve(databaseUrl: string, port: number): Promise<Server> {
  const child = Bun.spawn(["bun", resolve(import.meta.dir, "../adapters/cli/main.ts"), "serve"], {
    env: { ...process.env, CERTKEEPER_DATABASE_URL: databaseUrl, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "warn", CERTKEEPER_METRICS_TOKEN: METRICS_TOKEN },
    stdout: "ignore",
    stderr: "inherit",
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 200; i++) {
    if ((await fetch(`${url}/readyz`).catch(() => null))?.ok) break;
    await Bun.sleep(50);
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** Resident set size of a process, in MB, from /proc (after a moment to settle). */
async function rssMb(pid: number): Promise<number> {
  await Bun.sleep(500);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) / 1024;
}

async function listAll(server: Server, key: string): Promise<{ items: number; pages: number; ms: number; p50: number; p99: number }> {
  let cursor: string | null = null;
  let items = 0;
  let pages = 0;
  const times: number[] = [];
  const started = performance.now();
  do {
    const t = performance.now();
    const response = await fetch(`${server.url}/v1/certificates?limit=${pageSize}${cursor ? `&cursor=${cursor}` : ""}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const body = (await response.json()) as { data: unknown[]; meta: { nextCursor: string | null } };
    if (response.status !== 200) throw new Error(`list answered ${response.status}: ${JSON.stringify(body)}`);
    times.push(performance.now() - t);
    items += body.data.length;
    pages++;
    cursor = body.meta.nextCursor;
  } while (cursor);
  times.sort((a, b) => a - b);
  return { items, pages, ms: performance.now() - started, p50: times[Math.floor(times.length / 2)]!, p99: times[Math.floor(times.length * 0.99)]! };
}

async function scrape(server: Server): Promise<{ ms: number; bytes: number }> {
  const started = performance.now();
  const response = await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const bytes = (await response.arrayBuffer()).byteLength;
  return { ms: performance.now() - started, bytes };
}

const loadStarted = performance.now();
const empty = await database("empty", 0);
const full = await database("full", total);
const loadSeconds = (performance.now() - loadStarted) / 1000;

const floorServer = await serve(empty.url, 39_000 + Math.floor(Math.random() * 1000));
const floorIdle = await rssMb(floorServer.pid);
await listAll(floorServer, empty.key);
const floorAfter = await rssMb(floorServer.pid);
await floorServer.stop();

const server = await serve(full.url, 40_000 + Math.floor(Math.random() * 1000));
const idle = await rssMb(server.pid);
const listing = await listAll(server, full.key);
const afterList = await rssMb(server.pid);
const metrics = await scrape(server);
const afterScrape = await rssMb(server.pid);
await server.stop();

const mb = (n: number) => `${n.toFixed(0).padStart(4)} MB`;
console.log(`Server memory with ${total.toLocaleString("en")} certificates (loaded in ${loadSeconds.toFixed(1)} s), RSS:`);
console.log(`  empty database (floor)     idle ${mb(floorIdle)}   after listing ${mb(floorAfter)}`);
console.log(`  ${total.toLocaleString("en")} certificates     idle ${mb(idle)}   after listing ${mb(afterList)}   after a /metrics scrape ${mb(afterScrape)}`);
console.log(`  above the floor: ${mb(afterScrape - floorAfter)}   (target: under 150 MB in all)`);
console.log(
  `Listing all ${listing.items.toLocaleString("en")} page by page (${listing.pages} pages of ${pageSize}): ${(listing.ms / 1000).toFixed(2)} s, ` +
    `p50 ${listing.p50.toFixed(1)} ms, p99 ${listing.p99.toFixed(1)} ms per page`,
);
console.log(`A /metrics scrape: ${(metrics.ms / 1000).toFixed(2)} s, ${(metrics.bytes / 1e6).toFixed(1)} MB of text`);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
