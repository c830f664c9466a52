/**
 * Benchmark (a): certificate checks per second against a local TLS server (in a process of its own),
 * at concurrency 1, 16 and 64, beside a bare node:tls connect-and-read loop in the same process and
 * run (the floor). A certkeeper check here is a scheduled re-check of an unchanged certificate: resolve
 * (through CERTKEEPER_RESOLVE), vet the address, handshake, read the chain, recognise its fingerprint,
 * apply the result and save it to the embedded libSQL database.
 *
 *   bun bench/checks.ts [--seconds 5]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import tls from "node:tls";
import { parseArgs } from "node:util";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import type { CertificateRecord } from "../core/base/records.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";

const { values } = parseArgs({ options: { seconds: { type: "string", default: "5" } } });
const seconds = Number(values.seconds);
const DOMAIN = "bench.certkeeper.test";
const domainOf = (n: number) => `c${n}.${DOMAIN}`;

const child = Bun.spawn(["bun", resolve(import.meta.dir, "support/tls_server.ts")], { stdout: "pipe", stderr: "inherit" });
const reader = child.stdout.getReader();
const { value } = await reader.read();
const { port, rootPem } = JSON.parse(new TextDecoder().decode(value).split("\n")[0]!);

/** Runs `work` with `concurrency` workers for `seconds`; returns completions per second. */
async function rate(concurrency: number, work: (worker: number) => Promise<void>): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < until) {
        await work(worker);
        done++;
      }
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

/** The floor: connect, handshake, read the peer chain, close. Nothing else. */
function bareCheck(): Promise<void> {
  return new Promise((resolveCheck, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, servername: domainOf(0), rejectUnauthorized: false });
    socket.once("secureConnect", () => {
      let cert = socket.getPeerCertificate(true);
      const seen = new Set();
      while (cert?.raw && !seen.has(cert)) {
        seen.add(cert);
        cert = (cert as { issuerCertificate?: typeof cert }).issuerCertificate!;
      }
      socket.destroy();
      resolveCheck();
    });
    socket.once("error", reject);
  });
}

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-"));
const store = await openLibsqlStore({ url: `file:${join(dir, "bench.db")}` });
const core = createCore({
  config: { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${DOMAIN}`, address: "127.0.0.1" }], logLevel: "error" },
  store,
  logger: silentLogger,
  trust: new TrustStore([rootPem]),
});
const org = await core.services.admin.createOrganization({ name: "Bench", plan: "enterprise" });
const scope = { organizationId: org.id, mode: "live" as const };

// One certificate per worker (so workers never race for one record), checked once to learn its chain.
const records: CertificateRecord[] = [];
for (let i = 0; i < 64; i++) {
  const record = { ...sampleCertificate(scope, i), domain: domainOf(i), port };
  await store.certificates.insert(record, { limit: 1000, events: [] });
  records.push((await core.services.monitor.check(record, { manual: false }))!.record);
}
const recheck = async (worker: number) => {
  const checked = await core.services.monitor.check(records[worker]!, { manual: false });
  if (!checked || checked.record.failure) throw new Error("a benchmark check failed");
  records[worker] = checked.record;
};

await rate(16, () => bareCheck()); // warm-up
await rate(16, recheck);
console.log(`Checks per second against one local TLS server (${seconds} s each)`);
console.log("concurrency   bare node:tls loop   certkeeper re-check   ratio");
for (const concurrency of [1, 16, 64]) {
  const floor = await rate(concurrency, () => bareCheck());
  const measured = await rate(concurrency, recheck);
  console.log(
    `${String(concurrency).padStart(11)}   ${floor.toFixed(0).padStart(18)}   ${measured.toFixed(0).padStart(19)}   ${(measured / floor).toFixed(2).padStart(5)}x`,
  );
}
console.log("(target: a re-check of an unchanged certificate at >= 0.8x the bare loop)");

child.kill();
await store.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
