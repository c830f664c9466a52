/**
 * certificate.renewed on a name whose nodes each have a certificate of their own, renewed on their own
 * days (as the simulated year's multi-node names are): one renewal per round, announced when no node
 * serves a leaf of the round before, never a "renewal" to a leaf served for weeks already.
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
import { SimulatedInternet, seededRandom, type ServedCertificate, type SimulatedServer } from "./support/simulated_internet.ts";

const START = Date.UTC(2026, 0, 1);
const LIFETIME = 90 * DAY;

function leaf(serial: string, notBefore: number): ServedCertificate {
  return { serial, from: notBefore, notBefore, notAfter: notBefore + LIFETIME, intermediate: null };
}

test("two nodes renewed on their own days, each with its own certificate: one certificate.renewed per renewal round, when both serve a new leaf", async () => {
  const clock = new FakeClock(START);
  const store = createMemoryStore();
  const internet = new SimulatedInternet(clock, seededRandom(1));
  const domain = "cdn.sim.example";
  // Both nodes start on L0. Round 1: node A gets L1 on day 30, node B L2 on day 35. Round 2: node A
  // gets L3 on day 90, node B L4 on day 95. Every node is renewed on time (two thirds of 90 days).
  const L0 = { ...leaf(`${domain}#0`, START - 30 * DAY), from: START - 400 * DAY };
  const L1 = leaf(`${domain}#1`, START + 30 * DAY);
  const L2 = leaf(`${domain}#2`, START + 35 * DAY);
  const L3 = leaf(`${domain}#3`, START + 90 * DAY);
  const L4 = leaf(`${domain}#4`, START + 95 * DAY);
  const server: SimulatedServer = {
    domain,
    nodes: [
      { address: "192.0.2.1", certificates: [L0, L1, L3] },
      { address: "192.0.2.2", certificates: [{ ...L0 }, L2, L4] },
    ],
    certificates: [L0, L1, L2, L3, L4],
    outages: [],
    flakiness: 0,
    alertThresholds: [],
    ari: false,
  };
  internet.servers.set(domain, server);

  const transports: Transports = { http: { post: async () => ({ status: 200, retryAfterMs: null }) }, email: { send: async () => {} }, ctFetch: internet.ctFetcher };
  const config: Config = { ...DEFAULT_CONFIG, checkIntervalMs: 6 * HOUR, logLevel: "error" };
  const core = createCore({ config, store, clock, source: internet, transports, trust: new TrustStore([]), logger: silentLogger });
  const admin = core.services.admin;
  const org = await admin.createOrganization({ name: "Rounds", plan: "enterprise" });
  const user = await admin.createUser({ organizationId: org.id, email: "rounds@acme.test", role: "owner" });
  const principal = { keyId: "key_rounds000000000000", userId: user.id, role: "owner" as const, scope: { organizationId: org.id, mode: "live" as const }, limits: org.limits };
  await core.call({ operation: addCertificate, caller: { kind: "host", principal } as const, body: { domain, alertThresholds: [], alertPolicy: "renewal" } });

  for (let at = START; at <= START + 110 * DAY; at += HOUR) {
    clock.set(at);
    await core.services.scheduler.runDue();
  }
  const events: EventRecord[] = (await store.events.list(principal.scope, { limit: 1000 })).reverse();
  const renewed = events
    .filter((e) => e.type === "certificate.renewed")
    .map((e) => `day ${Math.floor((e.createdAt - START) / DAY)}: -> ${(e.data.certificate as { serialNumber: string }).serialNumber}`);
  // Round 1 completes on day 35 (no node serves L0 any more); round 2 on day 95 (both serve leaves
  // issued in round 2). Between them, on day 90, node B still serves L2 (round 1's leaf, 55 days old).
  expect(renewed).toEqual([`day 35: -> ${L1.serial}`, `day 95: -> ${L3.serial}`]);
  // Nothing about a leaf served for 55 days is "a new certificate".
  expect(renewed.filter((r) => r.endsWith(L2.serial))).toEqual([]);
});
