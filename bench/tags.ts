/**
 * Benchmark (e): GET /v1/certificates?tag= over 100,000 certificates of one organization, through a
 * real `certkeeper serve` on the embedded libSQL database: the time of a page (p50, p99) for a tag
 * 2,000 certificates carry, for one 100 carry, for two tags together, and further pages by cursor.
 *
 *   bun bench/tags.ts [--certificates 100000] [--requests 300]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { createClient } from "@libsql/client";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { CERTIFICATE_COLUMNS, certificateValues } from "../adapters/sql/rows.ts";
import { sampleCertificate } from "./support/sample.ts";

const { values } = parseArgs({ options: { certificates: { type: "string", default: "100000" }, requests: { type: "string", default: "300" } } });
const total = Number(values.certificates);
const requests = Number(values.requests);
const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const url = `file:${join(dir, "tags.db")}`;

// One organization, a key, and `total` certificates (tag team:N on every 50th, "rare" on every 1,000th).
const store = await openLibsqlStore({ url });
const admin = new Admin(store, systemClock);
const org = await admin.createOrganization({ name: "Tags", plan: "enterprise", limits: { requestsPerMinute: 1_000_000_000, certificates: 1_000_000 } });
const user = await admin.createUser({ organizationId: org.id, email: "tags@bench.test", role: "owner" });
const { key } = await admin.createApiKey({ userId: user.id, name: "tags", mode: "live" });
await store.close();
const client = createClient({ url });
const loadStarted = performance.now();
for (let start = 0; start < total; start += 400) {
  const rows = Array.from({ length: Math.min(400, total - start) }, (_, i) => sampleCertificate({ organizationId: org.id, mode: "live" }, start + i));
  const width = CERTIFICATE_COLUMNS.split(",").length;
  await client.batch(
    [
      {
        sql: `INSERT INTO certificates (${CERTIFICATE_COLUMNS}) VALUES ${rows.map(() => `(${Array(width).fill("?").join(", ")})`).join(", ")}`,
        args: rows.flatMap((r) => certificateValues(r)),
      },
      {
        sql: `INSERT INTO certificate_tags (organization_id, mode, tag, certificate_id) VALUES ${rows.flatMap((r) => r.tags.map(() => "(?, ?, ?, ?)")).join(", ")}`,
        args: rows.flatMap((r) => r.tags.flatMap((tag) => [org.id, "live", tag, r.id])),
      },
    ],
    "write",
  );
}
client.close();
const loadSeconds = (performance.now() - loadStarted) / 1000;

const port = 41_000 + Math.floor(Math.random() * 1000);
const child = Bun.spawn([process.execPath, resolve(import.meta.dir, "../adapters/cli/main.ts"), "serve"], {
  env: { ...process.env, CERTKEEPER_DATABASE_URL: url, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "warn", CERTKEEPER_CHECK_INTERVAL: "1000h" },
  stdout: "ignore",
  stderr: "inherit",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 400 && !(await fetch(`${base}/readyz`).catch(() => null))?.ok; i++) await Bun.sleep(50);

async function get(path: string): Promise<{ ms: number; body: { data: Array<{ tags: string[] }>; meta: { nextCursor: string | null } } }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const body = (await response.json()) as any;
  if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${JSON.stringify(body)}`);
  return { ms: performance.now() - started, body };
}

async function measure(label: string, path: string, check: (tags: string[]) => boolean) {
  const times: number[] = [];
  let items = 0;
  for (let i = 0; i < requests; i++) {
    const { ms, body } = await get(path);
    if (!body.data.every((c) => check(c.tags))) throw new Error(`${path} listed a certificate without its tags`);
    items = body.data.length;
    times.push(ms);
  }
  times.sort((a, b) => a - b);
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(times.length * q))]!.toFixed(1);
  console.log(`  ${label.padEnd(44)} ${String(items).padStart(3)} items   p50 ${p(0.5).padStart(5)} ms   p99 ${p(0.99).padStart(5)} ms`);
}

/** Pages through every certificate carrying `tag`, timing each page. */
async function pageThrough(tag: string) {
  const times: number[] = [];
  let cursor: string | null = null;
  let items = 0;
  do {
    const { ms, body } = await get(`/v1/certificates?tag=${tag}&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    times.push(ms);
    items += body.data.length;
    cursor = body.meta.nextCursor;
  } while (cursor);
  times.sort((a, b) => a - b);
  console.log(`  every page of tag=${tag} (limit 100)`.padEnd(46) + ` ${items} items in ${times.length} pages, p99 ${times[Math.floor(times.length * 0.99)]!.toFixed(1)} ms a page`);
}

await measure("warm-up", "/v1/certificates?tag=team:1", () => true);
console.log(`GET /v1/certificates?tag= over ${total.toLocaleString("en")} certificates (loaded in ${loadSeconds.toFixed(1)} s), ${requests} requests each`);
await measure("tag=team:7 (2% of them carry it)", "/v1/certificates?tag=team:7", (tags) => tags.includes("team:7"));
await measure("tag=rare (0.1% carry it)", "/v1/certificates?tag=rare", (tags) => tags.includes("rare"));
await measure("tag=team:0,rare (both: 0.1%)", "/v1/certificates?tag=team:0,rare", (tags) => tags.includes("rare") && tags.includes("team:0"));
await measure("tag=team:7&limit=100", "/v1/certificates?tag=team:7&limit=100", (tags) => tags.includes("team:7"));
await measure("tag=nobody (none carry it)", "/v1/certificates?tag=nobody", () => false);
await pageThrough("team:7");
console.log("(target: p99 under 50 ms a page)");

child.kill("SIGTERM");
await child.exited;
rmSync(dir, { recursive: true, force: true });
process.exit(0);
