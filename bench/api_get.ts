/**
 * Benchmark (b): `GET /v1/certificates/{id}` with authentication, rate limiting and the embedded libSQL
 * database, beside a bare Elysia route returning the same JSON (the floor), both served by this Bun
 * process and loaded by autocannon in another process. Prints requests per second, p50/p99 latency and
 * the ratio to the floor.
 *
 *   bun bench/api_get.ts [--connections 64] [--seconds 10] [--log-level warn]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Elysia } from "elysia";
import { createWriteStream } from "node:fs";
import { DEFAULT_CONFIG, type LogLevel } from "../core/config/config.ts";
import { createLogger } from "../core/base/log.ts";
import { startServer } from "../adapters/elysia/server.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { runAutocannon, type LoadResult } from "./support/autocannon.ts";

const { values } = parseArgs({
  options: {
    connections: { type: "string", default: "64" },
    seconds: { type: "string", default: "10" },
    "log-level": { type: "string", default: "warn" },
  },
});
const connections = Number(values.connections);
// Request lines are logged at info, CERTKEEPER_LOG_LEVEL's default; pass --log-level info to include them.
const seconds = Number(values.seconds);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const databaseUrl = `file:${join(dir, "bench.db")}`;
const store = await openLibsqlStore({ url: databaseUrl });
// Logs go to a file, as to a log collector: their cost is measured, the terminal's is not.
const logFile = createWriteStream(join(dir, "server.log"));
const logLevel = values["log-level"] as LogLevel;
const server = await startServer(
  { ...DEFAULT_CONFIG, port: 0, databaseUrl, logLevel },
  { store, logger: createLogger(logLevel, (line) => logFile.write(`${line}\n`)) },
);
const admin = server.core.services.admin;
// A rate limit the load cannot reach: this measures the work of checking it, not refusals.
const org = await admin.createOrganization({ name: "Bench", plan: "enterprise", limits: { requestsPerMinute: 1_000_000_000 } });
const user = await admin.createUser({ organizationId: org.id, email: "bench@acme.test", role: "owner" });
const { key } = await admin.createApiKey({ userId: user.id, name: "bench", mode: "live" });
const record = sampleCertificate({ organizationId: org.id, mode: "live" }, 0);
await store.certificates.insert(record, { limit: 10, events: [] });

const url = `${server.url}/v1/certificates/${record.id}`;
const headers = { authorization: `Bearer ${key}` };
const sample = await fetch(url, { headers });
if (sample.status !== 200) throw new Error(`GET answered ${sample.status}: ${await sample.text()}`);
const body = await sample.json();

const bare = new Elysia().get("/v1/certificates/:id", () => body).listen({ hostname: "127.0.0.1", port: 0 });
const bareUrl = `http://127.0.0.1:${bare.server!.port}/v1/certificates/${record.id}`;

// Warm both up, then measure each alone.
await runAutocannon({ url: bareUrl, connections, seconds: 2 });
await runAutocannon({ url, headers, connections, seconds: 2 });
const floor = await runAutocannon({ url: bareUrl, connections, seconds });
const measured = await runAutocannon({ url, headers, connections, seconds });

const row = (label: string, r: LoadResult) =>
  `${label.padEnd(38)} ${String(Math.round(r.requestsPerSecond)).padStart(9)} req/s   p50 ${r.p50Ms.toFixed(2).padStart(6)} ms   p99 ${r.p99Ms.toFixed(2).padStart(6)} ms   non-2xx ${r.non2xx}`;
console.log(`GET /v1/certificates/{id}, ${connections} connections, ${seconds} s each, log level ${values["log-level"]}`);
console.log(row("bare Elysia route (floor)", floor));
console.log(row("certkeeper (auth, rate limit, libSQL)", measured));
console.log(`ratio to floor: ${(measured.requestsPerSecond / floor.requestsPerSecond).toFixed(2)}x   (target >= 0.3x, p99 < 20 ms)`);

bare.stop();
await server.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
