/**
 * certificate.renewed on names whose nodes each have a certificate of their own, renewed on their own
 * days, as the simulated year found it: a node that drops the connection at the check announcing a
 * renewal is back with its leaf of that round, which is no renewal then.
 */
import { expect, test } from "bun:test";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import type { EventRecord } from "../core/base/records.ts";
import type { Transports } from "../core/notify/ports.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { addCertificate } from "../core/operations/certificates_add.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { SimulatedInternet, type ServedCertificate, type SimulatedNode } from "./support/simulated_internet.ts";

const START = Date.UTC(2026, 0, 1);
const LIFETIME = 90 * DAY;
const domain = "cdn.sim.example";

function leaf(name: string, notBefore: number, from = notBefore): ServedCertificate {
  return { serial: `${domain}#${name}`, from, notBefore, notAfter: notBefore + LIFETIME, intermediate: null };
}

/** Runs `days` days of hourly scheduler turns over `nodes`; `random` decides which connections fail (flakiness 0.5). Returns "day N: -> serial" per certificate.renewed. */
async function renewals(nodes: SimulatedNode[], days: number, random: (clock: FakeClock) => () => number = () => () => 0.99): Promise<string[]> {
  const clock = new FakeClock(START);
  const store = createMemoryStore();
  const internet = new SimulatedInternet(clock, random(clock));
  const certificates = [...new Map(nodes.flatMap((n) => n.certificates).map((c) => [c.serial, c])).values()];
  internet.servers.set(domain, { domain, nodes, certificates, outages: [], flakiness: 0.5, alertThresholds: [], ari: false });
  const transports: Transports = { http: { post: async () => ({ status: 200, retryAfterMs: null }) }, email: { send: async () => {} }, ctFetch: internet.ctFetcher };
  const config: Config = { ...DEFAULT_CONFIG, checkIntervalMs: 6 * HOUR, logLevel: "error" };
  const core = createCore({ config, store, clock, source: internet, transports, trust: new TrustStore([]), logger: silentLogger });
  const org = await core.services.admin.createOrganization({ name: "Rounds", plan: "enterprise" });
  const user = await core.services.admin.createUser({ organizationId: org.id, email: "rounds@acme.test", role: "owner" });
  const principal = { keyId: "key_simrounds000000000", userId: user.id, role: "owner" as const, scope: { organizationId: org.id, mode: "live" as const }, limits: org.limits };
  await core.call({ operation: addCertificate, caller: { kind: "host", principal } as const, body: { domain, alertThresholds: [], alertPolicy: "renewal" } });
  for (let at = START; at <= START + days * DAY; at += HOUR) {
    clock.set(at);
    await core.services.scheduler.runDue();
  }
  const events: EventRecord[] = (await store.events.list(principal.scope, { limit: 1000 })).reverse();
  return events
    .filter((e) => e.type === "certificate.renewed")
    .map((e) => `day ${Math.floor((e.createdAt - START) / DAY)}: -> ${(e.data.certificate as { serialNumber: string }).serialNumber}`);
}

test("a node that drops the connection at the check announcing a round: its leaf of that round is not announced as a renewal later", async () => {
  // Three nodes on L0. Round 1: C gets C1 on day 20, B B1 on day 25, A A1 on day 30. Round 2: C gets
  // C2 on day 80, B B2 on day 85, A A2 on day 90. B drops its connections for 7 hours from day 30.
  const L0 = leaf("L0", START - 30 * DAY, START - 400 * DAY);
  const C1 = leaf("C1", START + 20 * DAY);
  const B1 = leaf("B1", START + 25 * DAY);
  const A1 = leaf("A1", START + 30 * DAY);
  const C2 = leaf("C2", START + 80 * DAY);
  const B2 = leaf("B2", START + 85 * DAY);
  const A2 = leaf("A2", START + 90 * DAY);
  // The simulated internet draws one number per node per check, in node order: node B is the second.
  const random = (clock: FakeClock) => {
    let calls = 0;
    return () => {
      const node = calls++ % 3;
      const now = clock.now();
      return node === 1 && now >= START + 30 * DAY && now < START + 30 * DAY + 7 * HOUR ? 0 : 0.99;
    };
  };
  const renewed = await renewals(
    [
      { address: "192.0.2.1", certificates: [L0, A1, A2] },
      { address: "192.0.2.2", certificates: [{ ...L0 }, B1, B2] },
      { address: "192.0.2.3", certificates: [{ ...L0 }, C1, C2] },
    ],
    100,
    random,
  );
  // Round 1 is announced on day 30 (B, silent then, serves B1 of round 1 already); round 2 on day 90.
  // B1, served since day 25, is never "a new certificate" (on day 80, when C2 replaces C1, it becomes
  // the certificate-level leaf).
  expect(renewed.filter((r) => r.endsWith(B1.serial))).toEqual([]);
  expect(renewed).toEqual([`day 30: -> ${C1.serial}`, `day 90: -> ${C2.serial}`]);
});
