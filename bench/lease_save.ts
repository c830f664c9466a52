/**
 * The database's share of a re-check, alone: certificates leased and saved through the real embedded
 * libSQL store (its connection thread, its checkpointer), as the scheduler does at saturation, with no
 * TLS. Leases of `--lease` certificates, each batch saved as an unchanged re-check (`--save` a
 * statement), over `--certificates` realistic rows. Prints the CPU time of every thread of this process
 * per certificate leased and saved, and each thread's share: the figures docs/architecture.md's "The
 * re-check path" compares group sizes by. Each size is run `--runs` times, interleaved. Of the two threads named
 * Worker, the busier is the connection's, the other the checkpointer's; `bun` is the event loop.
 *
 *   bun bench/lease_save.ts [--certificates 2000] [--sizes 12/8,33/27] [--runs 2] [--rounds-of 12000]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { sampleCertificate } from "./support/sample.ts";
import { cpuShares, threadCpu, threadCpuSince } from "./support/thread_cpu.ts";
import { newId, PLAN_LIMITS, type CertificateRecord } from "../core/base/mod.ts";
import { nextOnPhase } from "../core/monitor/mod.ts";

const { values } = parseArgs({
  options: {
    certificates: { type: "string", default: "2000" },
    sizes: { type: "string", default: "12/8,33/27" },
    runs: { type: "string", default: "2" },
    "rounds-of": { type: "string", default: "12000" },
  },
});
const count = Number(values.certificates);
const perRun = Number(values["rounds-of"]);
const sizes = values.sizes.split(",").map((size) => size.split("/").map(Number) as [lease: number, save: number]);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-bench-lease-"));
process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
const url = `file:${join(dir, "bench.db")}`;
const setup = await openLibsqlStore({ url });
let now = Date.now();
const org = { id: newId("org"), name: "Bench", plan: "enterprise" as const, limits: { ...PLAN_LIMITS.enterprise }, createdAt: now };
await setup.organizations.create(org);
const scope = { organizationId: org.id, mode: "live" as const };
for (let i = 0; i < count; i++) {
  await setup.certificates.insert({ ...sampleCertificate(scope, i, now), nextCheckAt: now - 1 }, { limit: count, events: [] });
}
await setup.close();

console.log(`Leasing and saving ${count} certificates through the embedded store, ${perRun} per run; CPU per certificate, every thread`);
for (let run = 0; run < Number(values.runs); run++) {
  for (const [lease, save] of sizes) {
    const store = await openLibsqlStore({ url });
    const before = threadCpu();
    const { user, system } = process.cpuUsage();
    let done = 0;
    // Leased and not yet saved: saves gather across leases, as the scheduler's groups do.
    let waiting: CertificateRecord[] = [];
    const saveGroup = async (group: CertificateRecord[]) => {
      // Saved together, as the scheduler's group commit does: an unchanged re-check's bookkeeping. Each
      // next check on the certificate's own phase, as a server sets them: the next leases take rows
      // in no order of the file.
      const saved = await Promise.all(
        group.map((r) => store.certificates.saveCheck({ ...r, lastCheckedAt: now, nextCheckAt: now + 1000 + nextOnPhase(r.id, 0, 100), updatedAt: now }, [], { detailsChanged: false })),
      );
      if (saved.includes(false)) throw new Error("a save lost its compare-and-swap: the benchmark is not measuring what it says");
      done += group.length;
    };
    while (done < perRun) {
      now += 1000;
      waiting.push(...(await store.certificates.claimDue({ owner: "bench", now, leaseUntil: now + 60_000, limit: lease })));
      while (waiting.length >= save) {
        await saveGroup(waiting.slice(0, save));
        waiting = waiting.slice(save);
      }
    }
    if (waiting.length > 0) await saveGroup(waiting);
    const cpu = process.cpuUsage({ user, system });
    const shares = cpuShares(threadCpuSince(before), done);
    await store.close();
    console.log(`run ${run + 1}  lease ${String(lease).padStart(3)} / save ${String(save).padStart(3)}  ${(((cpu.user + cpu.system) / done)).toFixed(1).padStart(6)} µs CPU a certificate  (${shares})`);
  }
}
