/**
 * A year of monitoring, simulated: 300 certificates (10,000 in `npm run bench:simulation`) whose
 * operators renew on time, late, or let them lapse, whose servers go down for hours or days, and some of
 * which drop single connections at random (flapping). A fifth of the names are served by 2-4 nodes
 * renewed at different moments (in a third of those, one node is forgotten and keeps its first
 * certificate all year; in a third, one node is down for hours or days while the others answer, some
 * from before the name is added), and a tenth carry an intermediate that expires before the leaf (announced by
 * `certificate.chain_expiring`). The clock is injected and moved an hour at a time; the network is a
 * deterministic model (test/support/simulated_internet.ts); the store, monitor, scheduler and
 * deliverer are the real ones, delivering to a channel whose receiver refuses 10 % of attempts.
 *
 * Two fifths of the certificates are on the `days` alert policy: 90- and 365-day certificates judged
 * at fixed thresholds. The rest are on `renewal`, with today's lifetimes (24 and 160 hours, 45, 90, 200 and
 * 398 days; for one name in seven the CA moves to a shorter one during the year) and ACME clients that
 * renew at two thirds of the lifetime (half under 10 days) with jitter,
 * or late, or stall silently, or let them lapse. Three in ten names of either policy have a CA that
 * publishes renewal information (ARI), and a fifth of those single-node names see their CA move the
 * window into the past before a mass revocation, the certificate then replaced days later, or never
 * (half of those CAs ask again a day later, the window's end earlier still).
 *
 * The oracle judges every alert against the servers' ground truth and the contract alone. Under `days`:
 * every threshold crossed while its certificate was served and known is announced (at or below that
 * threshold) within a few hours of the crossing, every expiry likewise. Under `renewal`: a healthy
 * rotation raises nothing but certificate.renewed; a leaf still served when its renewal deadline has
 * passed raises exactly one certificate.renewal_overdue, at the first check that sees it so; later
 * thresholds follow; a CA's request raises exactly one certificate.renewal_requested per window end; each issuance
 * after the watch's first poll raises exactly one certificate.issued, at the next poll. Nothing may be
 * announced twice, or delivered twice, or announced unowed.
 *
 * A run repeats: the world, the network's luck and every identifier (so every check's phase) come from
 * seeds. SIM_CERTIFICATES sets the size: a smaller year holds the same first names with the same ids,
 * so a name's year is replayed by a run just past it (site-3932: SIM_CERTIFICATES=3933). SIM_LUCK
 * draws another network luck and other phases over the same world; SIM_ONLY=<names> watches only
 * those names of the same world (their ids, so phases, then differ); SIM_DEBUG=1 prints the first
 * wrong name's world, checks and events, SIM_DEBUG=<name> that name's.
 */
import { afterAll, expect, test } from "bun:test";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import type { EventRecord } from "../core/base/records.ts";
import type { HttpTransport, Transports } from "../core/notify/ports.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { addCertificate } from "../core/operations/certificates_add.ts";
import { addChannel } from "../core/operations/channels_add.ts";
import { addWatch } from "../core/operations/watches_add.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { SimulatedInternet, SimulatedResponder, seededRandom, seedOf, type CheckLog, type RenewalPolicy, type ServedCertificate, type SimulatedServer, type CheckRecord } from "./support/simulated_internet.ts";
import { RevocationChecker } from "../core/revocation/mod.ts";
import { AriClient } from "../core/ari/mod.ts";
import type { AlertPolicy } from "../core/base/records.ts";

const CERTIFICATES = Number(process.env.SIM_CERTIFICATES ?? 300);
const START = Date.UTC(2026, 0, 1);
const END = START + 365 * DAY;
const STEP = HOUR;
/** Alerts may lag a crossing by a step, plus the retries of a failing check (one step each). */
const TOLERANCE = 4 * STEP;
/** CERTKEEPER_CHECK_INTERVAL in this world: how long an unreachable certificate may wait for its next check. */
const CHECK_INTERVAL = 6 * HOUR;

const THRESHOLD_SETS = [[30, 14, 7, 3, 1], [30, 14, 7, 3, 1], [30, 14, 7, 3, 1], [21, 7, 1], [60, 30, 10, 5, 2, 0], [7], []];
/** Today's lifetimes, for certificates on the renewal policy. */
const LIFETIMES = [24 * HOUR, 160 * HOUR, 45 * DAY, 90 * DAY, 200 * DAY, 398 * DAY];
/**
 * A lifetime for a draw in [0, 1): 24 hours for one name in twenty-five (renewed twice a day and
 * checked every two hours, each such name costs the year as much as twelve of the others), the rest
 * evenly among the others.
 */
function lifetimeOf(draw: number): number {
  if (draw < 0.04) return LIFETIMES[0]!;
  return LIFETIMES[1 + Math.floor(((draw - 0.04) / 0.96) * (LIFETIMES.length - 1))]!;
}
/** The CAA record set that permits the simulated CA (any other forbids it). */
const PERMITTING_CAA = `0 issue "sim-ca.example"`;
/**
 * For one renewal name in seven, the CA moving it to a shorter lifetime (as CAs are moving to 45 days
 * and less) on a day of the year: its certificates issued from then on live that long. 24 hours is
 * not a target (each such name costs the year a dozen others).
 */
function changedLifetime(lifetime: number, random: () => number): { at: number; lifetime: number } | undefined {
  const draw = random();
  const at = START + 20 * DAY + Math.floor(random() * 300 * DAY);
  const shorter = LIFETIMES.slice(1).filter((l) => l < lifetime);
  const target = shorter[Math.floor(random() * shorter.length)];
  return draw < 1 / 7 && target !== undefined ? { at, lifetime: target } : undefined;
}

/** A CA's request for early replacement is seen when ARI is next asked: within two checks' time. */
const REQUEST_TOLERANCE = 13 * HOUR + TOLERANCE;

/**
 * The run's random bytes (identifiers, and so each certificate's check phase, which its id sets) drawn
 * from a seed, so that a run repeats; the process's own generator is back after it.
 */
const systemRandomValues = crypto.getRandomValues;
afterAll(() => {
  crypto.getRandomValues = systemRandomValues;
});
function seedRandomValues(random: () => number): void {
  crypto.getRandomValues = (<T extends ArrayBufferView | null>(array: T): T => {
    if (array) {
      const bytes = new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(random() * 256);
    }
    return array;
  }) as typeof crypto.getRandomValues;
}

interface Delivered {
  eventId: string;
  type: string;
}

test(`a year of ${CERTIFICATES.toLocaleString("en-US")} certificates: zero missed thresholds, zero duplicates`, async () => {
  const random = seededRandom(20261120);
  const clock = new FakeClock(START);
  const store = createMemoryStore();
  // The network's luck (dropped connections, failed lookups, a responder down) is drawn per name and
  // per serial, so that a run repeats whatever order its checks run in; SIM_LUCK draws another.
  const luck = Number(process.env.SIM_LUCK ?? 7);
  seedRandomValues(seededRandom(seedOf(luck, "identifiers")));
  const responder = new SimulatedResponder(seededRandom(31), (serial) => seededRandom(seedOf(luck + 24, serial)));
  const checker = new RevocationChecker({
    fetcher: { fetch: async () => { throw new Error("the simulation asks its responder directly"); } },
    cache: store.revocations,
    timeoutMs: 10_000,
  });
  const internet = new SimulatedInternet(clock, seededRandom(7), { checker, responder }, (domain) => seededRandom(seedOf(luck, domain)));
  internet.ari = new AriClient({
    fetcher: internet.caFetcher,
    cache: store.renewalInfo,
    directories: [{ issuer: "Simulated CA", url: SimulatedInternet.CA_DIRECTORY }],
    timeoutMs: 10_000,
  });
  const revocationRandom = seededRandom(13);
  const renewalRandom = seededRandom(2027);
  const caaRandom = seededRandom(8659);
  const nodeOutageRandom = seededRandom(2028);
  const lifetimeChangeRandom = seededRandom(2029);
  const delivered: Delivered[] = [];
  let attempts = 0;
  const receiverRandom = seededRandom(99);
  /** Attempts the receiver refused, per event id. */
  const refused = new Map<string, number>();
  const http: HttpTransport = {
    async post(request) {
      attempts++;
      const body = JSON.parse(request.body);
      if (receiverRandom() < 0.1) {
        refused.set(body.id, (refused.get(body.id) ?? 0) + 1);
        return { status: 503, retryAfterMs: null };
      }
      delivered.push({ eventId: body.id, type: body.type });
      return { status: 200, retryAfterMs: null };
    },
  };
  // Certificate Transparency: a search service listing every certificate the simulated CAs issue.
  const transports: Transports = { http, email: { send: async () => {} }, ctFetch: internet.ctFetcher };
  const config: Config = { ...DEFAULT_CONFIG, ctUrl: "https://ct.sim.example", ctIntervalMs: HOUR, checkIntervalMs: CHECK_INTERVAL, checkConcurrency: 256, deliveryRetryMs: [5 * 60_000, 30 * 60_000, 2 * HOUR, 6 * HOUR], logLevel: "error" };
  const core = createCore({ config, store, clock, source: internet, transports, trust: new TrustStore([]), logger: silentLogger });
  const admin = core.services.admin;
  const org = await admin.createOrganization({ name: "Sim", plan: "enterprise" });
  const user = await admin.createUser({ organizationId: org.id, email: "sim@acme.test", role: "owner" });
  const principal = { keyId: "key_simulation00000000", userId: user.id, role: "owner" as const, scope: { organizationId: org.id, mode: "live" as const }, limits: org.limits };
  const caller = { kind: "host", principal } as const;
  await core.call({ operation: addChannel, caller, body: { type: "webhook", name: "sim", config: { url: "https://receiver.example/hook" } } });
  // One watch over every name: its issuances are what a deployment lags behind (CONTRACT §20).
  await core.call({ operation: addWatch, caller, body: { domain: "sim.example" } });

  // The servers, then the certificates added through the same operation the API uses.
  const policies: RenewalPolicy[] = ["on-time", "on-time", "on-time", "late", "late", "lapses", "yearly"];
  const renewalPolicies: RenewalPolicy[] = ["on-time", "on-time", "on-time", "on-time", "late", "stalls", "stalls", "lapses"];
  const certificateOf = new Map<string, string>();
  const alertPolicyOf = new Map<string, AlertPolicy>();
  /** Names whose every part is healthy: on-time renewals, no outage, no flapping, one node, nothing revoked, requested or blocked by CAA. */
  const healthy = new Set<string>();
  /** Names whose CA moves them to a shorter lifetime during the year. */
  const movedLifetime = new Set<string>();
  const only = process.env.SIM_ONLY ? new Set(process.env.SIM_ONLY.split(",")) : undefined;
  for (let i = 0; i < CERTIFICATES; i++) {
    const domain = `site-${i}.sim.example`;
    const alertPolicy: AlertPolicy = i % 5 < 2 ? "days" : "renewal";
    const multi = random() < 0.2;
    const policy = alertPolicy === "days" ? policies[Math.floor(random() * policies.length)]! : renewalPolicies[Math.floor(renewalRandom() * renewalPolicies.length)]!;
    const ari = renewalRandom() < 0.3;
    // (Drawn in the order the year has always drawn them: its world stays the same.)
    const alternating = multi && renewalRandom() < 0.33;
    const lifetime = alertPolicy === "renewal" ? lifetimeOf(renewalRandom()) : undefined;
    const lifetimeChange = lifetime === undefined ? undefined : changedLifetime(lifetime, lifetimeChangeRandom);
    if (lifetimeChange) movedLifetime.add(domain);
    const server = internet.addServer(domain, {
      start: START,
      end: END,
      policy,
      outages: random() < 0.25 ? 1 + Math.floor(random() * 3) : 0,
      flakiness: random() < 0.1 ? 0.3 : 0,
      alertThresholds: THRESHOLD_SETS[Math.floor(random() * THRESHOLD_SETS.length)]!,
      nodes: multi ? 2 + Math.floor(random() * 3) : 1,
      forgottenNode: multi && random() < 0.33,
      shortIntermediate: random() < 0.1,
      // A CDN rolling a renewal out: one node serves the old or the new certificate at random for hours.
      alternatingNode: alternating,
      // A tenth of the names publish CAA; in some, a change forbids the simulated CA for days (twice with
      // the same record, once with another).
      ...(caaRandom() < 0.1 ? { caa: caaPeriods(caaRandom) } : {}),
      ari,
      ...(lifetime !== undefined ? { lifetime } : {}),
      ...(lifetimeChange ? { lifetimeChange } : {}),
    });
    alertPolicyOf.set(domain, alertPolicy);
    // A third of the names of several nodes have one node down for an hour to four days while the
    // others answer; a tenth of those from before the name is added until some time after.
    if (server.nodes.length > 1 && nodeOutageRandom() < 0.33) {
      const node = Math.floor(nodeOutageRandom() * server.nodes.length);
      const from = nodeOutageRandom() < 0.1 ? START - DAY : START + HOUR + Math.floor(nodeOutageRandom() * 360 * DAY);
      server.nodeOutages = [{ node, from, to: from + HOUR + Math.floor(nodeOutageRandom() * 4 * DAY) }];
    }
    // Its CA asks for early replacement before a mass revocation: a fifth of single-node ARI names, at a
    // moment before the served certificate's usual window; replaced 2-5 days later, or never.
    let requested = false;
    if (ari && server.nodes.length === 1 && renewalRandom() < 0.2) {
      const at = START + DAY + Math.floor(renewalRandom() * 330 * DAY);
      const cert = SimulatedInternet.servedAt(server.nodes[0]!, at);
      const lifetime = cert.notAfter - cert.notBefore;
      if (at > cert.notBefore + 0.2 * lifetime && at < cert.notBefore + 0.5 * lifetime && cert.notAfter - at > 2 * REQUEST_TOLERANCE) {
        const replaceAfter = renewalRandom() < 0.5 ? 2 * DAY + Math.floor(renewalRandom() * 3 * DAY) : null;
        // Half of them ask again later (once certkeeper surely saw the first request: ARI is asked every
        // 6 hours), the window's end earlier still: a second request.
        const askAgainAfter = REQUEST_TOLERANCE + Math.floor(renewalRandom() * 12 * HOUR);
        const again = renewalRandom() < 0.5 && cert.notAfter - (at + askAgainAfter) > 2 * REQUEST_TOLERANCE ? askAgainAfter : null;
        internet.incident(server, at, replaceAfter, again);
        requested = true;
      }
    }
    // About 3 % of servers have a certificate revoked during the year; half of those are replaced within
    // a week (some before a cached good answer runs out, so certkeeper never sees them revoked), on
    // every node that serves it. On a name of several nodes, the certificate one of them serves: others
    // may serve it too (renewed together), or serve another, not revoked (a tenth of those names, so
    // that the suite's year holds some).
    if (revocationRandom() < (server.nodes.length > 1 ? 0.1 : 0.03)) {
      const at = START + 2 * DAY + Math.floor(revocationRandom() * 340 * DAY);
      const nodeIndex = Math.floor(revocationRandom() * server.nodes.length);
      const cert = SimulatedInternet.servedAt(server.nodes[nodeIndex]!, at);
      // Every node serving it keeps it at least 8 days more (until a replacement, if any).
      const kept = server.nodes.every((node) => {
        const served = SimulatedInternet.servedAt(node, at);
        const next = node.certificates[node.certificates.indexOf(served) + 1];
        return served.serial !== cert.serial || !next || next.from > at + 8 * DAY;
      });
      if (at < cert.notAfter - DAY && kept) {
        internet.revoke(server, at, revocationRandom() < 0.5 ? 2 * HOUR + Math.floor(revocationRandom() * 7 * DAY) : null, nodeIndex);
      }
    }
    // SIM_ONLY (names, comma-separated): the world stays the same, only those names are watched.
    if (only && !only.has(domain)) continue;
    // Adding needs one successful retrieval: add each certificate at a moment its server answers.
    server.outages = server.outages.filter(([from]) => from > START + HOUR);
    const saved = server.flakiness;
    server.flakiness = 0;
    const { data } = await core.call({ operation: addCertificate, caller, body: { domain, alertThresholds: server.alertThresholds, alertPolicy } });
    server.flakiness = saved;
    certificateOf.set((data as { id: string }).id, domain);
    const revoked = server.certificates.some((c) => c.revokedAt !== undefined);
    if (alertPolicy === "renewal" && policy === "on-time" && server.outages.length === 0 && server.flakiness === 0 && server.nodes.length === 1 && !server.certificates.some((c) => c.intermediate) && !revoked && !requested && !server.caa) {
      healthy.add(domain);
    }
  }

  internet.logIssuances();
  const watches = core.services.watches as unknown as { runDue(): Promise<number> };
  const started = performance.now();
  for (let at = START; at <= END; at += STEP) {
    clock.set(at);
    await watches.runDue();
    await core.services.scheduler.runDue();
    await core.services.deliveries!.loop.runDue();
  }
  // Drain: let every delivery still pending run its retries out before judging, however long the
  // schedule's last waits are (a fixed number of extra hours could judge retries still due).
  const drainLimit = clock.now() + 7 * DAY;
  while ((await store.events.nextDeliveryAt()) !== null && clock.now() < drainLimit) {
    clock.set(Math.max(clock.now() + 1, (await store.events.nextDeliveryAt())!));
    await core.services.deliveries!.loop.runDue();
  }
  const elapsed = performance.now() - started;

  const events: EventRecord[] = [];
  let page = await store.events.list(principal.scope, { limit: 1000 });
  while (page.length > 0) {
    events.push(...page);
    page = await store.events.list(principal.scope, { limit: 1000, beforeSeq: page.at(-1)!.seq });
  }

  const daysDomains = new Map([...certificateOf].filter(([, domain]) => alertPolicyOf.get(domain) === "days"));
  const renewalDomains = new Map([...certificateOf].filter(([, domain]) => alertPolicyOf.get(domain) === "renewal"));
  const { missed, duplicates, late, unwanted, chainAlerts } = judge(events, internet, daysDomains);
  // CONTRACT §18: chain_expiring is unchanged under the renewal policy: judged there too, as under days.
  const renewalChain = judge(events, internet, new Map([...certificateOf].filter(([, domain]) => alertPolicyOf.get(domain) === "renewal")), { chainOnly: true });
  const renewal = judgeRenewal(events, internet, renewalDomains, config.checkIntervalMs);
  const requests = judgeRequests(events, internet, certificateOf);
  const deterministic = new Set(
    [...internet.servers.values()].filter((server) => server.nodes.length > 1 && server.outages.length === 0 && !SimulatedInternet.partial(server) && !server.nodes.some((n) => n.alternating)).map((server) => server.domain),
  );
  const deployments = judgeDeployments(events, internet, certificateOf, deterministic);
  const replayed = replayDeployments(events, internet, certificateOf);
  const blocked = judgeBlocked(events, internet, certificateOf);
  const issued = judgeIssued(events, internet);
  // Rollouts never flap: each new certificate is announced renewed once.
  const renewed = judgeRenewed(events, internet, certificateOf, config.checkIntervalMs);
  const renewedTwice = duplicatesOf(events.filter((e) => e.type === "certificate.renewed").map((e) => `${e.certificateId} ${(e.data.certificate as { serialNumber: string }).serialNumber}`));
  // A healthy rotation is not news: certificate.renewed and nothing else.
  const unhealthy = events.filter((e) => healthy.has((e.data.certificate as { domain?: string } | undefined)?.domain ?? "") && e.type !== "certificate.renewed");
  const revocations = judgeRevocations(events, internet, certificateOf, responder, config.checkIntervalMs);
  const rules = judgeEventRules(events, internet, certificateOf);
  const deliveredTwice = delivered.length - new Set(delivered.map((d) => d.eventId)).size;
  const deliveredIds = new Set(delivered.map((d) => d.eventId));
  // A delivery whose every attempt the receiver refused (it refuses 10 % at random) ends `failed` after
  // the schedule's last retry, as CONTRACT §7 says: about events × 0.1^5 of them (≈ 2 at 10,000
  // certificates), the receiver's doing. Anything else not delivered would be an alert lost.
  const maxAttempts = config.deliveryRetryMs.length + 1;
  const undeliveredAll = events.filter((e) => !deliveredIds.has(e.id));
  const gaveUp = undeliveredAll.filter((e) => refused.get(e.id) === maxAttempts);
  const undelivered = undeliveredAll.filter((e) => refused.get(e.id) !== maxAttempts);
  const byType = Object.fromEntries(
    [...new Set(events.map((e) => e.type))].sort().map((type) => [type, events.filter((e) => e.type === type).length]),
  );
  console.log(
    JSON.stringify(
      {
        certificates: CERTIFICATES,
        simulatedDays: 365,
        checks: internet.checks,
        failedChecks: internet.failures,
        events: events.length,
        eventsByType: byType,
        deliveryAttempts: attempts,
        delivered: delivered.length,
        missedThresholds: missed.length,
        duplicateAlerts: duplicates.length,
        lateAlerts: late.length,
        unwantedAlerts: unwanted.length,
        chainAlertsOwed: chainAlerts,
        chainAlertsOwedUnderRenewal: renewalChain.chainAlerts,
        names: { multiAddress: [...internet.servers.values()].filter((s) => s.nodes.length > 1).length, withNodeOutage: [...internet.servers.values()].filter((s) => (s.nodeOutages?.length ?? 0) > 0).length, withForgottenNode: [...internet.servers.values()].filter((s) => s.nodes.some((n) => n.certificates.length === 1) && s.nodes.length > 1).length, shortIntermediate: [...internet.servers.values()].filter((s) => s.certificates.some((c) => c.intermediate)).length },
        deliveredTwice,
        undelivered: undelivered.length,
        failedAfterEveryAttemptRefused: gaveUp.length,
        renewalPolicy: {
          certificates: renewalDomains.size,
          byLifetimeHours: Object.fromEntries(LIFETIMES.map((l) => [l / HOUR, [...renewalDomains.values()].filter((d) => { const c = internet.servers.get(d)!.certificates[0]!; return c.notAfter - c.notBefore === l; }).length])),
          healthyNames: healthy.size,
          movedToShorterLifetime: movedLifetime.size,
          healthyMoved: [...healthy].filter((domain) => movedLifetime.has(domain)).length,
          eventsOfHealthyNames: events.filter((e) => healthy.has((e.data.certificate as { domain?: string } | undefined)?.domain ?? "")).length,
          unwantedForHealthyNames: unhealthy.length,
          overdueOwed: renewal.overdueOwed,
          overdueMissed: renewal.overdueMissed.length,
          overdueLate: renewal.overdueLate.length,
          overdueUnowed: renewal.overdueUnowed.length,
          overdueDuplicates: renewal.overdueDuplicates.length,
          thresholdsOwed: renewal.thresholdsOwed,
          thresholdsMissed: renewal.thresholdsMissed.length,
          thresholdsUnwanted: renewal.thresholdsUnwanted.length,
          expiriesMissed: renewal.expiriesMissed.length,
          expiriesLate: renewal.expiriesLate.length,
          duplicates: renewal.duplicates.length,
        },
        deployments: {
          namesJudged: deterministic.size,
          alternatingNodes: [...internet.servers.values()].filter((server) => server.nodes.some((n) => n.alternating)).length,
          owed: deployments.owed,
          announced: deployments.announced,
          missed: deployments.missed.length,
          late: deployments.late.length,
          unowed: deployments.unowed.length,
          replayedNames: replayed.names,
          replayedOwed: replayed.owed,
          replayedOwedThoughReplaced: replayed.owedThoughReplaced,
          replayedMissed: replayed.missed.length,
          replayedOther: replayed.wrong.length,
          duplicates: deployments.duplicates.length,
          wrongLagging: deployments.wrongLagging.length,
          missingLagging: deployments.missingLagging.length,
          noneLagging: deployments.noneLagging.length,
          renewedTwice: renewedTwice.length,
        },
        renewed: {
          rounds: renewed.rounds,
          owed: renewed.owed,
          announced: renewed.announced,
          missed: renewed.missed.length,
          unwanted: renewed.unwanted.length,
          doubled: renewed.doubled.length,
        },
        issued: {
          owed: issued.owed,
          announced: issued.announced,
          missed: issued.missed.length,
          late: issued.late.length,
          unowed: issued.unowed.length,
          duplicates: issued.duplicates.length,
          wrongData: issued.wrongData.length,
        },
        renewalBlocked: {
          namesWithCaa: [...internet.servers.values()].filter((server) => server.caa).length,
          owed: blocked.owed,
          announced: blocked.announced,
          missed: blocked.missed.length,
          late: blocked.late.length,
          unowed: blocked.unowed.length,
          duplicates: blocked.duplicates.length,
        },
        renewalRequests: {
          incidents: requests.incidents,
          askedAgain: requests.askedAgain,
          owed: requests.owed,
          announced: requests.announced,
          missed: requests.missed.length,
          unowed: requests.unowed.length,
          duplicates: requests.duplicates.length,
          ariQuestions: [...internet.ariAsks.values()].reduce((n, asks) => n + asks.length, 0),
        },
        revocations: {
          revokedCertificates: revocations.revoked,
          onSeveralNodes: revocations.onSeveralNodes,
          owedOnSeveralNodes: revocations.owedOnSeveralNodes,
          replaced: revocations.replaced,
          owed: revocations.owed,
          announced: revocations.announced,
          missed: revocations.missed.length,
          late: revocations.late.length,
          duplicates: revocations.duplicates.length,
          falseAlarms: revocations.falseAlarms.length,
          latestHoursAfterRevocation: revocations.latestHours,
          responderQuestions: revocations.questions,
          askedBeforeNextUpdate: revocations.tooOften.length,
        },
        eventRules: {
          checked: rules.checked,
          notLowestThreshold: rules.notLowest.length,
          repeatedTransitions: rules.repeated.length,
          recoveredUnowed: rules.recoveredUnowed.length,
          wrongOverdueData: rules.wrongData.length,
          overdueReasonsJudged: rules.reasonsJudged,
          wrongOverdueReason: rules.wrongReason.length,
          validWhileAlerted: rules.valid.length,
        },
        wallSeconds: Math.round(elapsed / 100) / 10,
      },
      null,
      2,
    ),
  );
  const firstWrong = [...missed, ...late, ...renewal.expiriesMissed, ...renewal.expiriesLate, ...renewal.overdueMissed, ...renewal.overdueLate, ...renewal.thresholdsMissed, ...renewal.thresholdsUnwanted][0];
  // SIM_DEBUG=1 shows the first wrong name's world, checks and events; SIM_DEBUG=<name> that name's.
  const shown = process.env.SIM_DEBUG?.includes(".") ? process.env.SIM_DEBUG : firstWrong?.split(" ")[0]!.split(/[#/]/)[0];
  if (shown !== undefined && process.env.SIM_DEBUG) {
    const domain = shown;
    const server = internet.servers.get(domain)!;
    console.log(JSON.stringify({ missed: firstWrong, alertPolicy: alertPolicyOf.get(domain), thresholds: server.alertThresholds, outages: server.outages.map(([a, b]) => [new Date(a).toISOString(), new Date(b).toISOString()]), flakiness: server.flakiness, certificates: server.certificates.map((c) => ({ serial: c.serial, from: new Date(c.from).toISOString(), notAfter: new Date(c.notAfter).toISOString() })), nodes: server.nodes.map((n) => n.certificates.map((c) => `${c.serial} from ${new Date(c.from).toISOString()}`)) }, null, 1));
    console.log(JSON.stringify([...internet.checksOf(domain)].map((c) => `${new Date(c.at).toISOString()} ${c.serial}`)));
    for (const e of events.filter((e) => (e.data.certificate as any)?.domain === domain).reverse()) {
      console.log(new Date(e.createdAt).toISOString(), e.type, (e.data.certificate as any).serialNumber, e.data.threshold ?? "", (e.data.certificate as any).status);
    }
  }
  /** The year holds enough of each kind to judge (not asked of a year narrowed to a few names by SIM_ONLY). */
  const enough = (count: number, floor: number) => {
    if (!only) expect(count).toBeGreaterThan(floor);
  };
  expect(missed.slice(0, 5)).toEqual([]);
  expect(duplicates.slice(0, 5)).toEqual([]);
  expect([...renewalChain.missed, ...renewalChain.late, ...renewalChain.duplicates].slice(0, 5)).toEqual([]);
  enough(renewalChain.chainAlerts, 0);
  // Only the lowest threshold crossed; transitions raised once; overdue data from the world.
  expect(rules.notLowest.slice(0, 5)).toEqual([]);
  expect(rules.repeated.slice(0, 5)).toEqual([]);
  expect(rules.recoveredUnowed.slice(0, 5)).toEqual([]);
  expect(rules.wrongData.slice(0, 5)).toEqual([]);
  expect(rules.wrongReason.slice(0, 5)).toEqual([]);
  expect(rules.valid.slice(0, 5)).toEqual([]);
  expect(late.slice(0, 5)).toEqual([]);
  expect(unwanted.slice(0, 5)).toEqual([]);
  // Renewal, not age: nothing unwanted, nothing missed, nothing late, nothing twice.
  expect(unhealthy.slice(0, 5).map((e) => `${(e.data.certificate as { domain: string }).domain} ${e.type}`)).toEqual([]);
  expect(renewal.overdueMissed.slice(0, 5)).toEqual([]);
  expect(renewal.overdueLate.slice(0, 5)).toEqual([]);
  expect(renewal.overdueUnowed.slice(0, 5)).toEqual([]);
  expect(renewal.overdueDuplicates.slice(0, 5)).toEqual([]);
  expect(renewal.thresholdsMissed.slice(0, 5)).toEqual([]);
  expect(renewal.thresholdsUnwanted.slice(0, 5)).toEqual([]);
  expect(renewal.expiriesMissed.slice(0, 5)).toEqual([]);
  expect(renewal.expiriesLate.slice(0, 5)).toEqual([]);
  expect(renewal.duplicates.slice(0, 5)).toEqual([]);
  expect(deployments.missed.slice(0, 5)).toEqual([]);
  expect(deployments.late.slice(0, 5)).toEqual([]);
  expect(deployments.unowed.slice(0, 5)).toEqual([]);
  expect(replayed.missed.slice(0, 5)).toEqual([]);
  expect(replayed.wrong.slice(0, 5)).toEqual([]);
  enough(replayed.owed, 0);
  expect(deployments.duplicates.slice(0, 5)).toEqual([]);
  expect(deployments.wrongLagging.slice(0, 5)).toEqual([]);
  expect(deployments.missingLagging.slice(0, 5)).toEqual([]);
  expect(renewedTwice.slice(0, 5)).toEqual([]);
  expect(deployments.noneLagging.slice(0, 5)).toEqual([]);
  // One certificate.renewed a round, none while a node still serves a leaf of an earlier round, none missed.
  expect(renewed.unwanted.slice(0, 5)).toEqual([]);
  expect(renewed.doubled.slice(0, 5)).toEqual([]);
  expect(renewed.missed.slice(0, 5)).toEqual([]);
  enough(renewed.owed, CERTIFICATES);
  enough(deployments.owed, 0);
  // Issuances: each announced once by the watch, at its first poll after it, with the world's data.
  expect(issued.missed.slice(0, 5)).toEqual([]);
  expect(issued.late.slice(0, 5)).toEqual([]);
  expect(issued.unowed.slice(0, 5)).toEqual([]);
  expect(issued.duplicates.slice(0, 5)).toEqual([]);
  expect(issued.wrongData.slice(0, 5)).toEqual([]);
  enough(issued.owed, CERTIFICATES);
  expect(blocked.missed.slice(0, 5)).toEqual([]);
  expect(blocked.late.slice(0, 5)).toEqual([]);
  expect(blocked.unowed.slice(0, 5)).toEqual([]);
  expect(blocked.duplicates.slice(0, 5)).toEqual([]);
  enough(blocked.owed, 0);
  expect(requests.missed.slice(0, 5)).toEqual([]);
  expect(requests.unowed.slice(0, 5)).toEqual([]);
  expect(requests.duplicates.slice(0, 5)).toEqual([]);
  enough(healthy.size, CERTIFICATES / 20);
  // Some healthy names rotate through their CA's move to a shorter lifetime: still no news.
  enough([...healthy].filter((domain) => movedLifetime.has(domain)).length, 0);
  enough(renewal.overdueOwed, CERTIFICATES / 50);
  enough(requests.owed, 0);
  expect([deliveredTwice, undelivered.length]).toEqual([0, 0]);
  // Revocations: each announced once, none for a certificate that was not revoked, no responder asked
  // again before the nextUpdate of its last answer.
  expect(revocations.missed.slice(0, 5)).toEqual([]);
  expect(revocations.late.slice(0, 5)).toEqual([]);
  expect(revocations.duplicates.slice(0, 5)).toEqual([]);
  expect(revocations.falseAlarms.slice(0, 5)).toEqual([]);
  expect(revocations.tooOften.slice(0, 5)).toEqual([]);
  enough(revocations.revoked, CERTIFICATES / 100);
  // Names of several nodes among them.
  enough(revocations.owedOnSeveralNodes, 0);
  enough(revocations.owed, 0);
  // The year did happen: every kind of event, thousands of checks.
  if (!only) expect(Object.keys(byType)).toEqual([
    "certificate.chain_expiring",
    "certificate.expired",
    "certificate.expiring",
    "certificate.invalid",
    "certificate.issued",
    "certificate.not_deployed",
    "certificate.recovered",
    "certificate.renewal_blocked",
    "certificate.renewal_overdue",
    "certificate.renewal_requested",
    "certificate.renewed",
    "certificate.revoked",
    "certificate.unreachable",
  ]);
  enough(chainAlerts, 0);
  enough(internet.checks, CERTIFICATES * 365 * 3);
}, 300_000 * Math.max(1, CERTIFICATES / 300));

/**
 * Compares the announced alerts with what the servers served and what certkeeper's checks could see.
 * For each threshold crossing (and each expiry) of a certificate while it was served:
 * - what decides is the first conclusive observation at or after the moment: a successful check (the
 *   certificate it saw) or the third failure in a row (certkeeper then declares the server unreachable
 *   and judges the last certificate it saw). Single failures are retried first by design, so one lost
 *   packet raises no alert; if a retry then finds the certificate renewed, no alert is owed for the old one;
 * - missed: owed, and nothing at or below the threshold announced for that serial within TOLERANCE
 *   of the moment, or, when the servers were down then, of the earlier of the check that decided it
 *   and the outage's end (dueBy);
 * - late: announced, but after that;
 * - duplicates: one (serial, threshold) or one expiry announced twice;
 * - unwanted: a certificate.expiring for a threshold not in the certificate's list, or raised before
 *   its crossing (or about a leaf the name never served); a certificate.expired before its notAfter;
 *   any certificate.renewal_overdue (CONTRACT §18: `days` is Part I and II behaviour exactly; the
 *   overdue alert is the `renewal` policy's, and is not among the events "unchanged under both").
 */
function judge(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>, options: { chainOnly?: boolean } = {}) {
  const missed: string[] = [];
  const late: string[] = [];
  const duplicates: string[] = [];
  const unwanted: string[] = [];
  const domains = new Set(certificateOf.values());
  for (const event of options.chainOnly ? [] : events) {
    const certificate = event.data.certificate as { domain: string; serialNumber: string } | undefined;
    if (!certificate || !domains.has(certificate.domain)) continue;
    const server = internet.servers.get(certificate.domain)!;
    const cert = server.certificates.find((c) => c.serial === certificate.serialNumber);
    const at = new Date(event.createdAt).toISOString();
    if (event.type === "certificate.renewal_overdue") unwanted.push(`${certificate.serialNumber} renewal_overdue under days at ${at}`);
    else if (event.type === "certificate.expiring") {
      const threshold = event.data.threshold as number;
      if (!cert || !server.alertThresholds.includes(threshold) || event.createdAt < crossing(cert.notAfter, threshold)) unwanted.push(`${certificate.serialNumber} ${threshold} at ${at}`);
    } else if (event.type === "certificate.expired") {
      if (!cert || event.createdAt <= cert.notAfter) unwanted.push(`${certificate.serialNumber} expired at ${at}`);
    }
  }
  // serial (of the leaf, or of the chain certificate) → announcements (threshold, -1 for expiry, and when)
  const announced = new Map<string, Array<{ threshold: number; at: number }>>();
  for (const event of events) {
    if (event.type !== "certificate.expiring" && event.type !== "certificate.expired" && event.type !== "certificate.chain_expiring") continue;
    if (options.chainOnly && event.type !== "certificate.chain_expiring") continue;
    const serial =
      event.type === "certificate.chain_expiring"
        ? (event.data.chainCertificate as { serialNumber: string }).serialNumber
        : (event.data.certificate as { serialNumber: string }).serialNumber;
    const threshold = event.type === "certificate.expired" ? -1 : (event.data.threshold as number);
    const list = announced.get(serial) ?? [];
    if (list.some((a) => a.threshold === threshold)) duplicates.push(`${serial} ${threshold === -1 ? "expired" : threshold}`);
    list.push({ threshold, at: event.createdAt });
    announced.set(serial, list);
  }
  const announcedAtOrBelow = (serial: string, threshold: number, from: number, to: number) =>
    (announced.get(serial) ?? []).some((a) => a.threshold <= threshold && a.at >= from && a.at <= to);
  let chainAlerts = 0;
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    const log = internet.checksOf(domain);
    for (const cert of server.certificates) {
      // An intermediate that expires before the leaf: each threshold, while it is the one served.
      const above = cert.intermediate;
      if (above) {
        // A leaf is issued under an intermediate with 50-80 days left: a high threshold (60) may be
        // crossed before the chain is first served. Then the alert is owed from its first sighting on,
        // as for a certificate added inside a threshold. Another node may have shown it (and had it
        // announced) earlier: any announcement after the real crossing counts.
        const firstSeen = log.find((check) => check.intermediate === above.serialNumber)?.at ?? Infinity;
        for (const t of server.alertThresholds) {
          const crossing = above.notAfter - (t + 1) * DAY + 1;
          const at = Math.max(crossing, firstSeen);
          if (at < START + HOUR || at > END - TOLERANCE) continue;
          const decided = decidedAt(log, above.serialNumber, at, "intermediate");
          if (decided === null) continue;
          chainAlerts++;
          if (announcedAtOrBelow(above.serialNumber, t, crossing, dueBy(server, decided, at, log, above.serialNumber, "intermediate"))) continue;
          if (announcedAtOrBelow(above.serialNumber, t, at, Infinity)) late.push(`${above.serialNumber} ${t}`);
          else missed.push(`${above.serialNumber} ${t} at ${new Date(at).toISOString()}`);
        }
      }
      if (options.chainOnly) continue;
      const moments: Array<[string, number, number]> = server.alertThresholds.map((t) => [String(t), t, cert.notAfter - (t + 1) * DAY + 1]);
      moments.push(["expired", -1, cert.notAfter + 1]);
      for (const [label, threshold, at] of moments) {
        if (at < START + HOUR || at > END - TOLERANCE) continue;
        const decided = decidedAt(log, cert.serial, at);
        if (decided === null) continue;
        if (announcedAtOrBelow(cert.serial, threshold, at, dueBy(server, decided, at, log, cert.serial))) continue;
        if (announcedAtOrBelow(cert.serial, threshold, at, Infinity)) late.push(`${cert.serial} ${label}`);
        else missed.push(`${cert.serial} ${label} at ${new Date(at).toISOString()}`);
      }
    }
  }
  return { missed, duplicates, late, unwanted, chainAlerts };
}

/**
 * Rules every event obeys whatever the name (judged against the world and the contract, never the
 * product's own state):
 * - CONTRACT §7: of the thresholds crossed, only the lowest is raised: a certificate.expiring for a
 *   threshold while a lower one of the list was already crossed is unwanted;
 * - certificate.unreachable, certificate.invalid and certificate.recovered are changes of status: the
 *   same one never twice in a row for a certificate (unreachable again only once the name answered in
 *   between), and recovered only after one of the others;
 * - §18: renewal_overdue's data names the leaf's deadline (the world's: the ARI window's end, else the
 *   lifetime rule) and its daysUntilExpiry, and the certificate it carries is not `valid`; §19: a
 *   renewal_requested's certificate is not `valid` either;
 * - §22: an overdue certificate whose check found CAA forbidding its CA is `renewal_blocked`, not
 *   `renewal_overdue` (and the other way round).
 */
function judgeEventRules(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>) {
  const result = { notLowest: [] as string[], repeated: [] as string[], recoveredUnowed: [] as string[], wrongData: [] as string[], wrongReason: [] as string[], reasonsJudged: { renewal_overdue: 0, renewal_blocked: 0 }, valid: [] as string[], checked: 0 };
  /** The last of unreachable, invalid and recovered raised, per certificate, and when. */
  const open = new Map<string, { type: string; at: number }>();
  /** The statuses every event of a certificate carried since that last one. */
  const statusesSince = new Map<string, Set<string>>();
  // The store lists events newest first: oldest first, ties in the order they were raised.
  const chronological = [...events].reverse().sort((a, b) => a.createdAt - b.createdAt);
  for (const event of chronological) {
    const certificate = event.data.certificate as { id?: string; domain: string; serialNumber: string; status: string; statusReason: string | null } | undefined;
    if (!certificate || event.certificateId === null || !certificateOf.has(event.certificateId)) continue;
    const server = internet.servers.get(certificate.domain)!;
    const at = new Date(event.createdAt).toISOString();
    const since = statusesSince.get(event.certificateId);
    since?.add(certificate.status);
    // §22: while the name's CAA forbids its CA, an overdue certificate is `renewal_blocked`, else
    // `renewal_overdue` (judged on every event that carries one of them, where the check that raised it
    // had its CAA lookup answered).
    if (certificate.status === "expiring" && (certificate.statusReason === "renewal_overdue" || certificate.statusReason === "renewal_blocked")) {
      const seen = internet.checksOf(certificate.domain).find((check) => check.serial === certificate.serialNumber, event.createdAt, event.createdAt);
      if (seen && seen.caa !== null) {
        const owed = seen.caa !== undefined && seen.caa !== PERMITTING_CAA ? "renewal_blocked" : "renewal_overdue";
        result.reasonsJudged[owed]++;
        if (certificate.statusReason !== owed) result.wrongReason.push(`${certificate.serialNumber} ${event.type} at ${at}: statusReason ${certificate.statusReason}, CAA ${seen.caa ?? "none"}`);
      }
    }
    if (event.type === "certificate.expiring") {
      const cert = server.certificates.find((c) => c.serial === certificate.serialNumber);
      const threshold = event.data.threshold as number;
      result.checked++;
      if (cert && server.alertThresholds.some((t) => t < threshold && crossing(cert.notAfter, t) <= event.createdAt)) {
        result.notLowest.push(`${certificate.serialNumber} ${threshold} at ${at}: a lower threshold was crossed`);
      }
    } else if (event.type === "certificate.unreachable" || event.type === "certificate.invalid" || event.type === "certificate.recovered") {
      // Each is a change of status: never the same one twice in a row (invalid, unreachable, invalid
      // again is three changes), and recovered only from one of the other two.
      // A name that answered in between (back with a status that raises nothing: expired, revoked)
      // changed status twice: unreachable again is owed then. So is invalid again after events that
      // carried another status (revoked while another node's leaf was, then expiring, then invalid).
      const last = open.get(event.certificateId);
      const answeredSince = last !== undefined && internet.checksOf(certificate.domain).find((check) => check.serial !== null, last.at + 1, event.createdAt - 1) !== undefined;
      const movedSince = event.type === "certificate.invalid" && [...(since ?? [])].some((status) => status !== "invalid");
      if (last?.type === event.type && !(event.type === "certificate.unreachable" && answeredSince) && !movedSince) result.repeated.push(`${certificate.domain} ${event.type} again at ${at}`);
      if (event.type === "certificate.recovered" && last === undefined) result.recoveredUnowed.push(`${certificate.domain} recovered at ${at}`);
      open.set(event.certificateId, { type: event.type, at: event.createdAt });
      statusesSince.set(event.certificateId, new Set([certificate.status]));
    } else if (event.type === "certificate.renewal_overdue") {
      const endpoint = event.data.endpoint as { serialNumber: string } | undefined;
      const serial = endpoint?.serialNumber ?? certificate.serialNumber;
      const cert = server.certificates.find((c) => c.serial === serial);
      result.checked++;
      if (!cert) continue;
      const deadline = Date.parse(event.data.deadline as string);
      if (Math.abs(deadline - deadlineOf(cert, server)) > 1000) result.wrongData.push(`${serial} overdue at ${at}: deadline ${event.data.deadline}, the world's ${new Date(deadlineOf(cert, server)).toISOString()}`);
      if (event.data.daysUntilExpiry !== Math.floor((cert.notAfter - event.createdAt) / DAY)) result.wrongData.push(`${serial} overdue at ${at}: daysUntilExpiry ${event.data.daysUntilExpiry}`);
      if (certificate.status === "valid") result.valid.push(`${serial} overdue at ${at}, the certificate valid`);
    } else if (event.type === "certificate.renewal_requested") {
      result.checked++;
      if (certificate.status === "valid") result.valid.push(`${certificate.serialNumber} requested at ${at}, the certificate valid`);
    }
  }
  return result;
}

/**
 * When an alert about `serial` (a leaf's, or with `field` "intermediate" a chain certificate's) for
 * moment `at` became owed, given what the checks saw: the first conclusive observation at or after
 * `at` (a check that saw it, or the third failure in a row after it was last seen), or null when none is.
 */
function decidedAt(log: CheckLog, serial: string, at: number, field: "serial" | "intermediate" = "serial"): number | null {
  const low = log.firstAtOrAfter(at);
  let lastSeenIndex = low - 1;
  while (lastSeenIndex >= 0 && log.get(lastSeenIndex).serial === null) lastSeenIndex--;
  const lastSeen = lastSeenIndex >= 0 ? log.get(lastSeenIndex)[field] : undefined;
  // Failures in a row just before the moment count towards declaring the server unreachable.
  let failures = low - 1 - lastSeenIndex;
  for (let i = low; i < log.length; i++) {
    const check = log.get(i);
    if (check.serial !== null) return check[field] === serial ? check.at : null;
    if (++failures >= 3) return lastSeen === serial ? check.at : null; // unreachable: judged on the certificate it last saw
  }
  return null;
}

/**
 * How long an alert for moment `at` about leaf `serial` may take: until the check that decided it (the
 * alert comes with the check that sees it), and never later than TOLERANCE from the moment, or, when
 * the servers were down then, from the outage's end (a check that fails after the leaf last seen
 * expired must raise it from what it knows). A leaf no check had seen before the moment, first served
 * during the outage, is first seen by the first check after it: within one check interval of its end
 * (an unreachable certificate is checked on its regular schedule). While a node rolls a renewal out
 * (answering the old leaf or the new one from check to check, CONTRACT §20), one check seeing the old
 * leaf decides nothing on its own: TOLERANCE from the moment then.
 */
function dueBy(server: SimulatedServer, decided: number, at: number, log: CheckLog, serial: string, field: "serial" | "intermediate" = "serial"): number {
  const observable = observableFrom(server, at);
  const unseen = observable > at && log.find((check) => check[field] === serial, -Infinity, at - 1) === undefined;
  const latest = observable + (unseen ? CHECK_INTERVAL : 0) + TOLERANCE;
  const rolling = server.nodes.some((node) => node.alternating && node.certificates.some((c, i) => i > 0 && c.from < Math.max(decided, at) && c.from + 12 * HOUR > at));
  return rolling ? latest : Math.min(decided, latest);
}

/**
 * Revocations against the ground truth: a revoked certificate that was still served (and seen by a
 * check) after its revocation plus the responder's nextUpdate is owed exactly one certificate.revoked,
 * not late: the answer cached at the revocation (the responder's last one before it) holds until its
 * nextUpdate, so the revocation can be learnt from then on (CONTRACT §14); it is due one check interval
 * after that, one more for each check that failed and each question the responder failed to answer
 * meanwhile, plus TOLERANCE (after an outage meanwhile: seenBy);
 * nothing is owed, or allowed, for a certificate that was not revoked, or before it was; and no serial's
 * responder is asked again before the nextUpdate of the last answer it gave.
 */
function judgeRevocations(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>, responder: SimulatedResponder, intervalMs: number) {
  const announced = new Map<string, number[]>();
  for (const event of events) {
    if (event.type !== "certificate.revoked") continue;
    // A leaf another node serves than the certificate-level one is named in data.endpoint.
    const serial = (event.data.endpoint as { serialNumber: string } | undefined)?.serialNumber ?? (event.data.certificate as { serialNumber: string }).serialNumber;
    announced.set(serial, [...(announced.get(serial) ?? []), event.createdAt]);
  }
  const missed: string[] = [];
  const late: string[] = [];
  const duplicates: string[] = [];
  const falseAlarms: string[] = [];
  let revoked = 0;
  let onSeveralNodes = 0;
  let owedOnSeveralNodes = 0;
  let replaced = 0;
  let latest = 0;
  let owed = 0;
  const truth = new Map<string, number | undefined>();
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    for (const cert of server.certificates) {
      truth.set(cert.serial, cert.revokedAt);
      if (cert.revokedAt === undefined) continue;
      revoked++;
      if (server.nodes.length > 1) onSeveralNodes++;
      if (server.certificates.some((other) => other.serial === `${cert.serial}-replacement`)) replaced++;
      const times = announced.get(cert.serial) ?? [];
      if (times.length > 1) duplicates.push(`${cert.serial} announced ${times.length} times`);
      for (const at of times) latest = Math.max(latest, at - cert.revokedAt);
      // Seen by a check: served by a node that answered it (on a name of several nodes, any of them).
      const servedAt = (i: number) => {
        const check = log.get(i);
        return check.serial !== null && (check.serial === cert.serial || internet.answersAt(domain, check.at).some((answers) => answers.includes(cert.serial)));
      };
      const log = internet.checksOf(domain);
      let seenLate = false;
      for (let i = log.firstAtOrAfter(cert.revokedAt + responder.nextUpdateMs); i < log.length && !seenLate; i++) seenLate = servedAt(i);
      if (seenLate) owed++;
      if (seenLate && server.nodes.length > 1) owedOnSeveralNodes++;
      if (seenLate && times.length === 0) missed.push(`${cert.serial} revoked at ${new Date(cert.revokedAt).toISOString()}`);
      if (seenLate && times.length > 0) {
        const asks = responder.asks.get(cert.serial) ?? [];
        const cached = asks.filter((ask) => ask.at <= cert.revokedAt! && ask.validUntil !== null).at(-1);
        const learnable = Math.max(cert.revokedAt, cached?.validUntil ?? cert.revokedAt);
        const first = Math.min(...times);
        const failedAsks = asks.filter((ask) => ask.at >= learnable && ask.at <= first && ask.validUntil === null).length;
        // A check that failed, or at which no node answering served it (its node down alone), taught nothing.
        let failedChecks = 0;
        for (let i = log.firstAtOrAfter(learnable); i < log.length && log.get(i).at <= first; i++) if (!servedAt(i)) failedChecks++;
        const due = seenBy(server, learnable, (1 + failedAsks + failedChecks) * intervalMs, intervalMs);
        if (first > due) late.push(`${cert.serial} announced ${Math.round((first - learnable) / HOUR)} h after it could be learnt`);
      }
    }
  }
  for (const [serial, times] of announced) {
    const revokedAt = truth.get(serial);
    for (const at of times) if (revokedAt === undefined || at < revokedAt) falseAlarms.push(`${serial} at ${new Date(at).toISOString()}`);
  }
  const tooOften: string[] = [];
  let questions = 0;
  for (const [serial, asks] of responder.asks) {
    questions += asks.length;
    for (let i = 1; i < asks.length; i++) {
      const before = asks[i - 1]!;
      if (before.validUntil !== null && asks[i]!.at < before.validUntil) tooOften.push(`${serial} asked at ${new Date(asks[i]!.at).toISOString()}`);
    }
  }
  const announcedCount = [...announced.values()].reduce((sum, times) => sum + times.length, 0);
  return { revoked, onSeveralNodes, owedOnSeveralNodes, replaced, owed, announced: announcedCount, missed, late, duplicates, falseAlarms, tooOften, questions, latestHours: Math.round(latest / HOUR) };
}

/** The renewal deadline of a served certificate, from the contract: the CA's window end, else 3/4 (2/3 under 10 days) of the lifetime. */
function deadlineOf(cert: ServedCertificate, server: SimulatedServer): number {
  const lifetime = cert.notAfter - cert.notBefore;
  if (server.ari) return SimulatedInternet.ariWindow({ ...cert, incidentAt: undefined, askedAgainAt: undefined }, cert.notBefore).end;
  return cert.notBefore + Math.ceil(lifetime * (lifetime < 10 * DAY ? 2 / 3 : 3 / 4));
}

/**
 * The renewal policy's alerts against the ground truth (CONTRACT §18), per served certificate:
 * - renewal_overdue is owed at the first check at or after its deadline that sees it served by any
 *   answering node (and not expired), unless its CA's request for early replacement covered it; raised
 *   exactly once, then (named in data.endpoint when it is not the certificate-level leaf);
 * - and not late against the deadline itself (not against the product's check): on names whose nodes
 *   never drop a connection, by one step (the clock's hour) after the deadline when the leaf is surely
 *   the certificate-level one then (a check is made at the deadline, CONTRACT §18); when it becomes so
 *   only later (another node's earlier-expiring leaf replaced), or the servers are down at the
 *   deadline, by one check interval (plus TOLERANCE) after that moment or the outage's end. On
 *   flapping names a run of lost connections legitimately delays it: only the first rule applies;
 * - thresholds crossed after that moment are owed as under `days`; none may be raised before it;
 * - its expiry is owed as under `days`.
 */
function judgeRenewal(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>, intervalMs: number) {
  const domains = new Set(certificateOf.values());
  const overdue = new Map<string, number[]>();
  const expiring = new Map<string, Array<{ threshold: number; at: number }>>();
  const expired = new Map<string, number[]>();
  const requested = new Map<string, number[]>();
  // Oldest first (the events come newest first): each list below in the order its alerts came, so that
  // the first of them is the first ([0]); a CA asking twice has two requests for one serial.
  for (const event of [...events].reverse()) {
    const certificate = event.data.certificate as { domain: string; serialNumber: string } | undefined;
    if (!certificate || !domains.has(certificate.domain)) continue;
    // An overdue leaf another node serves is named in data.endpoint; the certificate-level one, in data.certificate.
    const endpoint = event.data.endpoint as { serialNumber: string } | undefined;
    const serial = event.type === "certificate.renewal_overdue" && endpoint ? endpoint.serialNumber : certificate.serialNumber;
    const add = <T>(map: Map<string, T[]>, value: T) => map.set(serial, [...(map.get(serial) ?? []), value]);
    if (event.type === "certificate.renewal_overdue") add(overdue, event.createdAt);
    else if (event.type === "certificate.expiring") add(expiring, { threshold: event.data.threshold as number, at: event.createdAt });
    else if (event.type === "certificate.expired") add(expired, event.createdAt);
    else if (event.type === "certificate.renewal_requested") add(requested, event.createdAt);
  }
  const result = {
    overdueOwed: 0,
    overdueMissed: [] as string[],
    overdueLate: [] as string[],
    overdueUnowed: [] as string[],
    overdueDuplicates: [] as string[],
    thresholdsOwed: 0,
    thresholdsMissed: [] as string[],
    thresholdsUnwanted: [] as string[],
    expiriesMissed: [] as string[],
    expiriesLate: [] as string[],
    duplicates: [] as string[],
  };
  for (const domain of domains) {
    const server = internet.servers.get(domain)!;
    const log = internet.checksOf(domain);
    for (const cert of server.certificates) {
      const serial = cert.serial;
      const announced = overdue.get(serial) ?? [];
      if (announced.length > 1) result.overdueDuplicates.push(`${serial} ${announced.length} times`);
      let coverAt: number | null;
      if (cert.incidentAt !== undefined) {
        // The CA's window had ended when it asked: the request covers the overdue alert.
        if (announced.length > 0) result.overdueUnowed.push(`${serial} overdue after its CA's request`);
        coverAt = requested.get(serial)?.[0] ?? null;
      } else {
        const deadline = deadlineOf(cert, server);
        // Seen served by an answering node: the certificate-level leaf, or another node's (CONTRACT §18: "an answering endpoint […] still serves the leaf").
        // (The nodes' answers are looked at only while some node's schedule may serve it.)
        const span = server.nodes.length > 1 ? servedSpan(server, serial) : null;
        const servedBy = (check: CheckRecord) =>
          check.serial === serial || (span !== null && check.at >= span[0] && check.at < span[1] && internet.answersAt(domain, check.at).some((nodes) => nodes.includes(serial)));
        const seen = log.find(servedBy, deadline, cert.notAfter);
        coverAt = seen?.at ?? null;
        if (seen && seen.at <= END - TOLERANCE) {
          result.overdueOwed++;
          if (announced.length === 0) result.overdueMissed.push(`${serial} deadline ${new Date(deadline).toISOString()} seen ${new Date(seen.at).toISOString()}`);
          else if (announced[0]! > seen.at) result.overdueLate.push(`${serial} ${Math.round((announced[0]! - seen.at) / HOUR)} h late`);
          else if (!SimulatedInternet.partial(server)) {
            // Its deadline has a check of its own once a check has seen the leaf served before it.
            const known = log.find(servedBy, -Infinity, deadline - 1) !== undefined;
            const due = overdueDueBy(server, cert, deadline, intervalMs, known);
            if (due !== null && announced[0]! > due) result.overdueLate.push(`${serial} ${Math.round((announced[0]! - due) / HOUR)} h after due (deadline ${new Date(deadline).toISOString()})`);
          }
        }
        for (const at of announced) if (!seen || at < seen.at) result.overdueUnowed.push(`${serial} at ${new Date(at).toISOString()}, deadline ${new Date(deadline).toISOString()}`);
      }
      // Thresholds: none before the overdue (or request) moment; those crossed after it, as under days.
      const alerts = expiring.get(serial) ?? [];
      for (const alert of alerts) {
        if (coverAt === null || alert.at < coverAt || crossing(cert.notAfter, alert.threshold) <= coverAt) {
          result.thresholdsUnwanted.push(`${serial} ${alert.threshold} at ${new Date(alert.at).toISOString()}`);
        }
      }
      if (new Set(alerts.map((a) => a.threshold)).size !== alerts.length) result.duplicates.push(`${serial} a threshold twice`);
      if (coverAt !== null) {
        // Once a node serves its replacement, a rollout is under way: the old leaf's thresholds are not
        // raised again for it (CONTRACT §20), so none is owed from then on (none is unwanted either).
        const replacedFrom = Math.min(...server.nodes.flatMap((node) => node.certificates.filter((c) => c.notBefore > cert.notBefore).map((c) => c.from)));
        for (const t of server.alertThresholds) {
          const at = crossing(cert.notAfter, t);
          const decided = at <= coverAt || at > END - TOLERANCE || at >= replacedFrom ? null : decidedAt(log, serial, at);
          if (decided === null) continue;
          result.thresholdsOwed++;
          if (!alerts.some((a) => a.threshold <= t && a.at >= at && a.at <= dueBy(server, decided, at, log, serial))) result.thresholdsMissed.push(`${serial} ${t} at ${new Date(at).toISOString()}`);
        }
      }
      const expiry = cert.notAfter + 1;
      const expiredAt = expired.get(serial) ?? [];
      if (expiredAt.length > 1) result.duplicates.push(`${serial} expired ${expiredAt.length} times`);
      const expiryDecided = decidedAt(log, serial, expiry);
      const expiryDue = expiryDecided === null ? Infinity : dueBy(server, expiryDecided, expiry, log, serial);
      if (expiry >= START + HOUR && expiryDue <= END && !expiredAt.some((at) => at >= expiry && at <= expiryDue)) {
        if (expiredAt.some((at) => at > expiryDue)) result.expiriesLate.push(`${serial} expired at ${new Date(expiry).toISOString()}`);
        else result.expiriesMissed.push(`${serial} expired at ${new Date(expiry).toISOString()}`);
      }
    }
  }
  return result;
}

/**
 * When some node of `server` may serve `serial`, from its schedule: from the first node's start of
 * it to the last node's next certificate (12 hours more on an alternating node, which may still
 * answer with the one before); null when no node ever does.
 */
function servedSpan(server: SimulatedServer, serial: string): [number, number] | null {
  let from = Infinity;
  let until = -Infinity;
  for (const node of server.nodes) {
    const index = node.certificates.findIndex((c) => c.serial === serial);
    if (index === -1) continue;
    from = Math.min(from, node.certificates[index]!.from);
    const next = node.certificates[index + 1];
    until = Math.max(until, next ? next.from + (node.alternating ? 12 * HOUR : 0) : Infinity);
  }
  return from === Infinity ? null : [from, until];
}

/**
 * When renewal_overdue for `cert` is due at the latest, from the servers' schedules alone (a name whose
 * nodes never drop a connection): the first moment from its deadline on when it is surely the
 * certificate-level leaf (every node answering serves it or a leaf expiring later, a node mid-rollout
 * counted with both its leaves) — one step after the deadline if that is the deadline itself and a
 * check saw the leaf before it (a check is made then), else one check interval (plus TOLERANCE) after
 * that moment (or the year's start, for
 * a deadline passed before it); an outage meanwhile moves it past the outage (seenBy). Null when it
 * never surely is before it expires.
 */
function overdueDueBy(server: SimulatedServer, cert: ServedCertificate, deadline: number, intervalMs: number, known: boolean): number | null {
  const possible = (node: SimulatedServer["nodes"][number], t: number): { sure: ServedCertificate; also: ServedCertificate | null } => {
    const sure = SimulatedInternet.servedAt(node, t);
    const index = node.certificates.indexOf(sure);
    return { sure, also: node.alternating && index > 0 && t < sure.from + 12 * HOUR ? node.certificates[index - 1]! : null };
  };
  const level = (t: number) => {
    let serving = false;
    for (const node of server.nodes) {
      const { sure, also } = possible(node, t);
      for (const leaf of also ? [sure, also] : [sure]) if (leaf.serial !== cert.serial && leaf.notAfter <= cert.notAfter) return false;
      if (sure.serial === cert.serial && !also) serving = true;
    }
    return serving;
  };
  // A deadline passed before the year began is seen at the checks after the certificate is added.
  const from = Math.max(deadline, START);
  const moments = [from, ...server.nodes.flatMap((node) => node.certificates.flatMap((c) => (node.alternating ? [c.from, c.from + 12 * HOUR] : [c.from])))]
    .filter((t) => t >= from && t <= cert.notAfter)
    .sort((a, b) => a - b);
  const moment = moments.find(level);
  if (moment === undefined) return null;
  // The deadline's own check (CONTRACT §18) comes at the first step at or after it: within one step
  // (of a leaf a check has seen; one first served unseen, during an outage, is seen by the next check).
  return moment === deadline && known ? seenBy(server, moment, 0, intervalMs, STEP) : seenBy(server, moment, intervalMs, intervalMs);
}

/**
 * The latest moment a check can be owed to have seen something the servers show from `at` on, given
 * that the next check may come `wait` later: `at + wait + TOLERANCE`, moved past every outage that
 * begins before then (a check after an outage comes within one check interval of its end).
 */
function seenBy(server: SimulatedServer, at: number, wait: number, intervalMs: number, tolerance = TOLERANCE): number {
  let due = at + wait + tolerance;
  for (let moved = true; moved; ) {
    moved = false;
    for (const [from, to] of server.outages) {
      if (from < due && to > at && to + intervalMs + TOLERANCE > due) {
        due = to + intervalMs + TOLERANCE;
        moved = true;
      }
    }
  }
  return due;
}

/** The first moment at or after `at` when the servers could show it: `at` itself, or the end of the outages covering it. */
function observableFrom(server: SimulatedServer, at: number): number {
  let moment = at;
  for (let moved = true; moved; ) {
    moved = false;
    for (const [from, to] of server.outages) {
      if (from <= moment && moment < to) {
        moment = to;
        moved = true;
      }
    }
  }
  return moment;
}

/** Threshold `t`'s crossing: the first millisecond at which daysUntilExpiry ≤ t. */
function crossing(notAfter: number, t: number): number {
  return notAfter - (t + 1) * DAY + 1;
}

/**
 * A CA's requests for early replacement (CONTRACT §19), under both policies: one renewal_requested per
 * serial and window end (a CA asking again with the window's end earlier still is a second request),
 * each owed once the certificate is still seen served after ARI was surely asked again (two checks'
 * time after the request), with that window in its data; never for a certificate or window its CA did
 * not ask about, never before it asked.
 */
function judgeRequests(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>) {
  const announced = new Map<string, number[]>();
  for (const event of events) {
    if (event.type !== "certificate.renewal_requested") continue;
    const serial = (event.data.certificate as { serialNumber: string }).serialNumber;
    const key = `${serial} ${Date.parse((event.data.window as { end: string }).end)}`;
    announced.set(key, [...(announced.get(key) ?? []), event.createdAt]);
  }
  const result = { incidents: 0, askedAgain: 0, owed: 0, announced: 0, missed: [] as string[], unowed: [] as string[], duplicates: [] as string[] };
  const askedAt = new Map<string, number>();
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    const log = internet.checksOf(domain);
    for (const cert of server.certificates) {
      if (cert.incidentAt === undefined) continue;
      result.incidents++;
      const requests = [{ at: cert.incidentAt, end: SimulatedInternet.ariWindow(cert, cert.incidentAt).end }];
      if (cert.askedAgainAt !== undefined) {
        result.askedAgain++;
        requests.push({ at: cert.askedAgainAt, end: SimulatedInternet.ariWindow(cert, cert.askedAgainAt).end });
      }
      for (const request of requests) {
        const key = `${cert.serial} ${request.end}`;
        askedAt.set(key, request.at);
        const seen = log.find((check) => check.serial === cert.serial, request.at + REQUEST_TOLERANCE - TOLERANCE, cert.notAfter);
        const times = announced.get(key) ?? [];
        if (seen && seen.at <= END - TOLERANCE) {
          result.owed++;
          if (!times.some((at) => at >= request.at && at <= seen.at + TOLERANCE)) result.missed.push(`${cert.serial} asked at ${new Date(request.at).toISOString()}`);
        }
      }
    }
  }
  for (const [key, times] of announced) {
    result.announced += times.length;
    if (times.length > 1) result.duplicates.push(`${key} ${times.length} times`);
    const at = askedAt.get(key);
    for (const time of times) if (at === undefined || time < at) result.unowed.push(`${key} at ${new Date(time).toISOString()}`);
  }
  return result;
}

/**
 * certificate.renewed against the nodes' leaves (CONTRACT §7, §11, §20). A name's renewal rounds: a
 * node's n-th leaf is of round n (nodes renewed together share one; every new leaf of a single node is
 * a round of its own); round k is complete once every node serves a leaf of round k or later (a
 * forgotten node stays in round 0: then no round completes). Judged from the world alone:
 * - unwanted: announced for a leaf the name never served, or while, at every successful check at that
 *   moment, a node that answered served a leaf of a round before the announced leaf's (what each node
 *   answered, a flapping or alternating node included, is the world's record: answersAt; a node that
 *   did not answer is not counted, which is conservative: the product may presume it still serves);
 *   on names whose nodes always answer, also one made when no round completed since the last one (or
 *   since the year began): the move to a leaf served already is no renewal;
 * - doubled: two announcements of leaves of one round;
 * (a leaf "of an earlier round" is also issued before the announced one; on names whose nodes drift
 * apart so far that a node's n-th leaf is issued after another's (n+1)-th, rounds are not told by
 * index: only the unwanted rule on answered leaves is judged there);
 * - missed: only on names whose nodes never drop a connection nor alternate (outages are known; on the
 *   others, which leaf a check judged is chance, so a missed one cannot be told exactly): a round
 *   completed at T is owed an announcement of a leaf of that round or later from T to one check
 *   interval (plus TOLERANCE) after T, or after an outage meanwhile (seenBy); not judged when the next round
 *   completes by then, or before the first check, or too near the year's end.
 */
function judgeRenewed(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>, intervalMs: number) {
  const announced = new Map<string, EventRecord[]>();
  for (const event of events) {
    if (event.type !== "certificate.renewed") continue;
    const domain = (event.data.certificate as { domain: string }).domain;
    announced.set(domain, [...(announced.get(domain) ?? []), event]);
  }
  const serialOf = (event: EventRecord) => (event.data.certificate as { serialNumber: string }).serialNumber;
  const result = { rounds: 0, owed: 0, announced: 0, missed: [] as string[], unwanted: [] as string[], doubled: [] as string[] };
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    const roundOf = new Map<string, number>();
    for (const node of server.nodes) node.certificates.forEach((c, i) => roundOf.set(c.serial, Math.min(roundOf.get(c.serial) ?? Infinity, i)));
    const list = (announced.get(domain) ?? []).sort((a, b) => a.createdAt - b.createdAt);
    result.announced += list.length;
    const notBeforeOf = new Map(server.certificates.map((c) => [c.serial, c.notBefore]));
    // Rounds are what the nodes' n-th leaves are only while every leaf of round n is issued before any
    // of round n + 1; nodes renewed on their own schedules (a short lifetime, a hundred renewals a year)
    // drift apart, and then which leaf is "of an earlier round" is told by issue alone.
    const issued: Array<[number, number]> = [];
    for (const node of server.nodes) node.certificates.forEach((c, i) => { const [low, high] = issued[i] ?? [Infinity, -Infinity]; issued[i] = [Math.min(low, c.notBefore), Math.max(high, c.notBefore)]; });
    const rounds = issued.every(([, high], i) => i + 1 >= issued.length || high < issued[i + 1]![0]);
    // Nodes with certificates of their own (renewed on their own days, each its own serial): the product
    // announces each replacement of the certificate's earliest-expiring leaf by a later one, as it
    // happens (docs/alerting.md), not one a round; only a leaf never served is judged there. Where the
    // nodes roll out one certificate, one announcement a round, when it completes.
    const serialsOf = (node: (typeof server.nodes)[number]) => node.certificates.map((c) => c.serial).join(" ");
    const ownLeaves = server.nodes.some((node) => node.certificates.some((c) => server.nodes.some((other) => other !== node && !serialsOf(other).split(" ").includes(c.serial) && other.certificates.length >= node.certificates.length)));
    const perRound = new Map<number, number>();
    for (const event of list) {
      const serial = serialOf(event);
      const at = new Date(event.createdAt).toISOString();
      const round = roundOf.get(serial);
      if (round === undefined) {
        result.unwanted.push(`${domain} renewed to ${serial}, never served, at ${at}`);
        continue;
      }
      if (ownLeaves) continue;
      if (rounds) perRound.set(round, (perRound.get(round) ?? 0) + 1);
      const checks = internet.answersAt(domain, event.createdAt);
      const older = (answers: Array<string | null>) => answers.some((s) => s !== null && roundOf.get(s)! < round && notBeforeOf.get(s)! < notBeforeOf.get(serial)!);
      if (checks.length === 0) result.unwanted.push(`${domain} renewed to ${serial} at ${at}, no server answered then`);
      else if (checks.every(older)) result.unwanted.push(`${domain} renewed to ${serial} (round ${round}) at ${at}, a node still serving ${checks[0]!.find((s) => s !== null && roundOf.get(s)! < round)}`);
    }
    for (const [round, times] of perRound) if (times > 1) result.doubled.push(`${domain} round ${round} announced ${times} times`);
    // Round completions, from the nodes' schedules.
    const roundAt = (t: number) => Math.min(...server.nodes.map((node) => roundOf.get(SimulatedInternet.servedAt(node, t).serial)!));
    const completions: Array<{ round: number; at: number }> = [];
    let current = roundAt(START);
    for (const t of [...new Set(server.nodes.flatMap((node) => node.certificates.map((c) => c.from)))].filter((t) => t > START).sort((a, b) => a - b)) {
      const round = roundAt(t);
      if (round > current) completions.push({ round, at: t });
      current = Math.max(current, round);
    }
    result.rounds += completions.length;
    if (ownLeaves || !rounds || SimulatedInternet.partial(server) || server.nodes.some((node) => node.alternating)) continue;
    // Every node answers every check here: an announcement needs a round completed since the one
    // before (or since the year began), else it announced a leaf that was served already.
    let lastRound = roundAt(START);
    for (const event of list) {
      const round = roundAt(event.createdAt);
      if (round <= lastRound) result.unwanted.push(`${domain} renewed to ${serialOf(event)} at ${new Date(event.createdAt).toISOString()}: no round completed since ${lastRound === roundAt(START) ? "the year began" : "the last announcement"}`);
      lastRound = Math.max(lastRound, round);
    }
    completions.forEach(({ round, at }, k) => {
      const due = seenBy(server, at, intervalMs, intervalMs);
      const next = completions[k + 1];
      if (at < START + HOUR || due > END || (next && next.at <= due)) return;
      result.owed++;
      if (!list.some((e) => e.createdAt >= at && e.createdAt <= due && roundOf.get(serialOf(e))! >= round)) result.missed.push(`${domain} round ${round} completed ${new Date(at).toISOString()}`);
    });
  }
  return result;
}

function duplicatesOf(keys: string[]): string[] {
  const seen = new Set<string>();
  return keys.filter((key) => (seen.has(key) ? true : (seen.add(key), false)));
}

/**
 * Issued but not deployed (CONTRACT §20), against the servers' ground truth. The watch records each
 * issuance within two hours of its notBefore; its grace is 24 hours or a tenth of its lifetime. On names
 * whose nodes never fail and never alternate, an issuance that a node still lags behind three hours
 * after the grace is owed exactly one certificate.not_deployed, announced from the grace's end on; one
 * that every node serves when the grace ends is owed none (issuances followed by the next one before then
 * are not judged), naming every node behind then. On every name, each announcement is once per issuance
 * and names only addresses that served an older certificate then.
 */
function judgeDeployments(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>, deterministic: Set<string>) {
  const announced = new Map<string, EventRecord[]>();
  for (const event of events) {
    if (event.type !== "certificate.not_deployed") continue;
    const domain = (event.data.certificate as { domain: string }).domain;
    const key = `${domain} ${Date.parse((event.data.deployment as { issuedAt: string }).issuedAt)}`;
    announced.set(key, [...(announced.get(key) ?? []), event]);
  }
  const result = { owed: 0, announced: 0, missed: [] as string[], late: [] as string[], unowed: [] as string[], duplicates: [] as string[], wrongLagging: [] as string[], missingLagging: [] as string[], noneLagging: [] as string[] };
  for (const [key, list] of announced) {
    result.announced += list.length;
    if (list.length > 1) result.duplicates.push(`${key} ${list.length} times`);
    const [domain, issuedAtText] = key.split(" ");
    const server = internet.servers.get(domain!)!;
    const notBeforeOf = new Map(server.certificates.map((c) => [c.serial, c.notBefore]));
    for (const event of list) {
      const lagging = event.data.lagging as string[];
      if (lagging.length === 0) result.noneLagging.push(`${key} at ${new Date(event.createdAt).toISOString()}`);
      // What each node answered at the checks of that moment (the world's record, a node mid-rollout
      // or flapping included): a lagging address answered an older leaf at one of them at least.
      const checks = internet.answersAt(domain!, event.createdAt);
      for (const address of lagging) {
        const index = server.nodes.findIndex((n) => n.address === address);
        const node = server.nodes[index];
        // An issuance recorded at second precision; a node mid-rollout may be seen either way.
        const newer = (serial: string | null | undefined) => serial !== null && serial !== undefined && notBeforeOf.get(serial)! >= Number(issuedAtText) - 1000;
        if (!node || (!node.alternating && SimulatedInternet.servedAt(node, event.createdAt).notBefore >= Number(issuedAtText) - 1000) || checks.every((answers) => newer(answers[index]))) {
          result.wrongLagging.push(`${key} ${address}`);
        }
      }
      // Where every node answers every check as its schedule says, every node behind then is named.
      if (deterministic.has(domain!)) {
        for (const node of server.nodes) {
          if (SimulatedInternet.servedAt(node, event.createdAt).notBefore < Number(issuedAtText) - 1000 && !lagging.includes(node.address)) {
            result.missingLagging.push(`${key} ${node.address} at ${new Date(event.createdAt).toISOString()}`);
          }
        }
      }
    }
  }
  for (const domain of certificateOf.values()) {
    if (!deterministic.has(domain)) continue;
    const server = internet.servers.get(domain)!;
    const issuances = [...server.certificates].sort((a, b) => a.notBefore - b.notBefore);
    issuances.forEach((issuance, k) => {
      const grace = Math.min(24 * HOUR, Math.floor((issuance.notAfter - issuance.notBefore) / 10));
      const latest = issuance.notBefore + grace + 3 * HOUR;
      if (issuance.notBefore < START || latest > END - TOLERANCE) return;
      const next = issuances[k + 1];
      if (next && next.notBefore < latest) return;
      const lagAt = (t: number) => server.nodes.some((node) => SimulatedInternet.servedAt(node, t).notBefore < issuance.notBefore);
      // Issuances are recorded at second precision (RFC 3339).
      const list = announced.get(`${domain} ${Math.floor(issuance.notBefore / 1000) * 1000}`) ?? [];
      if (lagAt(latest)) {
        result.owed++;
        if (list.length === 0) result.missed.push(`${issuance.serial} issued ${new Date(issuance.notBefore).toISOString()}`);
        else if (list[0]!.createdAt > latest + TOLERANCE || list[0]!.createdAt < issuance.notBefore + grace) result.late.push(`${issuance.serial} at ${new Date(list[0]!.createdAt).toISOString()}`);
      } else if (!lagAt(issuance.notBefore + grace) && list.length > 0) {
        result.unowed.push(`${issuance.serial} issued ${new Date(issuance.notBefore).toISOString()}`);
      }
    });
  }
  return result;
}

/**
 * New certificates for the watched domain (CONTRACT §15), against the CAs' issuances: the watch's
 * first poll (at the year's start) records those issued by then without events; each one issued after
 * it is owed exactly one certificate.issued, at the first poll at or after its notBefore (the watch is
 * polled every step), with the issuance's names, issuer, validity and fingerprint (`cert_sha256` in
 * upper-case colon form) and `authorizedIssuer` null (the watch allows any issuer); nothing else is
 * announced.
 */
function judgeIssued(events: EventRecord[], internet: SimulatedInternet) {
  const announced = new Map<string, EventRecord[]>();
  for (const event of events) {
    if (event.type !== "certificate.issued") continue;
    const key = `${(event.data.dnsNames as string[]).join(",")} ${Math.floor(Date.parse(event.data.notBefore as string) / 1000) * 1000}`;
    announced.set(key, [...(announced.get(key) ?? []), event]);
  }
  const result = { owed: 0, announced: 0, missed: [] as string[], late: [] as string[], unowed: [] as string[], duplicates: [] as string[], wrongData: [] as string[] };
  const owed = new Set<string>();
  for (const server of internet.servers.values()) {
    for (const cert of server.certificates) {
      if (cert.notBefore <= START || cert.notBefore > END) continue;
      // Times are announced at second precision (RFC 3339).
      const key = `${server.domain} ${Math.floor(cert.notBefore / 1000) * 1000}`;
      owed.add(key);
      result.owed++;
      const list = announced.get(key) ?? [];
      if (list.length === 0) {
        result.missed.push(`${cert.serial} issued ${new Date(cert.notBefore).toISOString()}`);
        continue;
      }
      if (list.length > 1) result.duplicates.push(`${cert.serial} ${list.length} times`);
      const event = list[0]!;
      const pollAt = START + Math.ceil((cert.notBefore - START) / STEP) * STEP;
      if (event.createdAt < cert.notBefore || event.createdAt > pollAt) result.late.push(`${cert.serial} issued ${new Date(cert.notBefore).toISOString()}, announced ${new Date(event.createdAt).toISOString()}`);
      const fingerprint = [...Buffer.from(cert.serial.padEnd(32, "#")).subarray(0, 32)].map((b) => b.toString(16).padStart(2, "0").toUpperCase()).join(":");
      const data = event.data as { domain: string; issuer: string; notAfter: string; fingerprintSha256: string | null; authorizedIssuer: boolean | null };
      if (data.domain !== "sim.example" || data.issuer !== "Simulated CA" || Math.abs(Date.parse(data.notAfter) - cert.notAfter) >= 1000 || data.fingerprintSha256 !== fingerprint || data.authorizedIssuer !== null) {
        result.wrongData.push(`${cert.serial}: ${JSON.stringify(data)}`);
      }
    }
  }
  for (const [key, list] of announced) {
    result.announced += list.length;
    if (!owed.has(key)) result.unowed.push(`${key} at ${new Date(list[0]!.createdAt).toISOString()}`);
  }
  return result;
}

/**
 * Issued but not deployed (CONTRACT §20) on every name whose nodes do not alternate, node outages and
 * flapping included, replayed from what each check's nodes answered (the world's record): an issuance
 * is recorded at the first watch poll at or after its notBefore (every step), and is pending when the
 * certificate-level leaf of the last answered check before then is older; it is settled at the first
 * check after that at which every answering node serves it or a later one; otherwise the first check
 * at or after the grace's end at which an answering node serves an older leaf owes exactly one
 * certificate.not_deployed, at that check, even when a later issuance was recorded before then (unless
 * an earlier one still open is the one kept). Issuances followed by the next one within two days of
 * their grace's end are not judged.
 */
function replayDeployments(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>) {
  const announced = new Map<string, number[]>();
  for (const event of events) {
    if (event.type !== "certificate.not_deployed") continue;
    const domain = (event.data.certificate as { domain: string }).domain;
    const key = `${domain} ${Date.parse((event.data.deployment as { issuedAt: string }).issuedAt)}`;
    announced.set(key, [...(announced.get(key) ?? []), event.createdAt]);
  }
  const result = { names: 0, owed: 0, owedThoughReplaced: 0, missed: [] as string[], wrong: [] as string[] };
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    if (server.nodes.some((node) => node.alternating)) continue;
    result.names++;
    const log = internet.checksOf(domain);
    const notBeforeOf = new Map(server.certificates.map((c) => [c.serial, c.notBefore]));
    const issuances = [...server.certificates].sort((a, b) => a.notBefore - b.notBefore);
    const pollOf = (notBefore: number) => START + Math.ceil((notBefore - START) / STEP) * STEP;
    // Each issuance's course: pending from its poll when the certificate-level leaf of the last
    // answered check before then is older; then settled (every answering node serves it or a later
    // one) or owed (the first check from its grace's end on at which an answering node is behind it).
    const courses = issuances.map((issuance) => {
      const grace = Math.min(24 * HOUR, Math.floor((issuance.notAfter - issuance.notBefore) / 10));
      const seenAt = pollOf(issuance.notBefore);
      const older = (serial: string | null) => serial !== null && notBeforeOf.get(serial)! < issuance.notBefore;
      let before: CheckRecord | undefined;
      for (let i = log.firstAtOrAfter(seenAt) - 1; i >= 0 && !before; i--) if (log.get(i).serial !== null) before = log.get(i);
      if (issuance.notBefore <= START || !before || !older(before.serial)) return { pending: false, grace, seenAt, owedAt: null, endedAt: null };
      for (let i = log.firstAtOrAfter(seenAt); i < log.length; i++) {
        const check = log.get(i);
        if (check.serial === null) continue;
        const answers = internet.answersAt(domain, check.at).flat().filter((serial) => serial !== null);
        if (!answers.some(older)) return { pending: true, grace, seenAt, owedAt: null, endedAt: check.at };
        if (check.at >= seenAt + grace) return { pending: true, grace, seenAt, owedAt: check.at, endedAt: check.at };
      }
      return { pending: true, grace, seenAt, owedAt: null, endedAt: null };
    });
    issuances.forEach((issuance, k) => {
      const key = `${domain} ${Math.floor(issuance.notBefore / 1000) * 1000}`;
      const times = announced.get(key) ?? [];
      const { grace, seenAt, owedAt } = courses[k]!;
      const next = issuances[k + 1];
      if (issuance.notBefore <= START || seenAt + grace + 2 * DAY > END || (next && next.notBefore < seenAt + grace + 2 * DAY)) return;
      // A later issuance recorded by the poll at or before the deciding check replaces it as the one
      // pending, but the earliest issuance not yet announced nor settled is kept and announced in its
      // turn: this one is owed all the same unless an earlier one was still open then (whether the
      // check or the poll of a step came first decides; either is right).
      const replacedAt = next ? pollOf(next.notBefore) : Infinity;
      const earlierOpen = owedAt !== null && replacedAt <= owedAt && courses.slice(0, k).some((c) => c.pending && c.seenAt <= replacedAt && (c.endedAt === null || c.endedAt >= replacedAt));
      if (owedAt !== null && earlierOpen && times.length === 0) {
        // Owed nothing: the earlier issuance kept pending is announced instead, naming the same addresses.
      } else if (owedAt !== null) {
        result.owed++;
        if (replacedAt <= owedAt) result.owedThoughReplaced++;
        if (times.length === 0) result.missed.push(`${issuance.serial} issued ${new Date(issuance.notBefore).toISOString()}, owed at ${new Date(owedAt).toISOString()}`);
        else if (times.length > 1 || times[0] !== owedAt) result.wrong.push(`${issuance.serial} announced ${times.map((t) => new Date(t).toISOString()).join(", ")}, owed at ${new Date(owedAt).toISOString()}`);
      } else if (times.length > 0) {
        result.wrong.push(`${issuance.serial} announced ${new Date(times[0]!).toISOString()}, owed none`);
      }
    });
  }
  return result;
}

/** One to three periods of 2-10 days in which a name's CAA forbids the simulated CA; the first record set comes back once. */
function caaPeriods(random: () => number): Array<{ from: number; to: number; value: string }> {
  const periods: Array<{ from: number; to: number; value: string }> = [];
  const values = ["other-ca.example", "other-ca.example", ";"];
  let at = START + Math.floor(random() * 60 * DAY);
  for (let i = 0; i < 1 + Math.floor(random() * 3) && at < END; i++) {
    const to = at + 2 * DAY + Math.floor(random() * 8 * DAY);
    periods.push({ from: at, to, value: values[i]! });
    at = to + 10 * DAY + Math.floor(random() * 60 * DAY);
  }
  return periods;
}

/**
 * CAA that will block the renewal (CONTRACT §22): each served certificate seen, by a check whose CAA
 * lookup answered, while a record set forbids its CA, is owed exactly one certificate.renewal_blocked for
 * that record set, at that first check; never for a certificate or record set not seen so.
 */
function judgeBlocked(events: EventRecord[], internet: SimulatedInternet, certificateOf: Map<string, string>) {
  const announced = new Map<string, number[]>();
  for (const event of events) {
    if (event.type !== "certificate.renewal_blocked") continue;
    const serial = (event.data.certificate as { serialNumber: string }).serialNumber;
    const key = `${serial}|${(event.data.caa as { records: string[] }).records.join("\n")}`;
    announced.set(key, [...(announced.get(key) ?? []), event.createdAt]);
  }
  const owedAt = new Map<string, number>();
  for (const domain of certificateOf.values()) {
    const server = internet.servers.get(domain)!;
    if (!server.caa) continue;
    for (const check of internet.checksOf(domain)) {
      if (check.serial === null || !check.caa || check.caa === PERMITTING_CAA) continue;
      const key = `${check.serial}|${check.caa}`;
      if (!owedAt.has(key)) owedAt.set(key, check.at);
    }
  }
  const result = { owed: owedAt.size, announced: 0, missed: [] as string[], late: [] as string[], unowed: [] as string[], duplicates: [] as string[] };
  for (const [key, at] of owedAt) {
    const times = announced.get(key) ?? [];
    if (times.length === 0) result.missed.push(`${key} at ${new Date(at).toISOString()}`);
    else if (times[0]! > at + TOLERANCE || times[0]! < at) result.late.push(`${key} at ${new Date(times[0]!).toISOString()}, owed ${new Date(at).toISOString()}`);
  }
  for (const [key, times] of announced) {
    result.announced += times.length;
    if (times.length > 1) result.duplicates.push(`${key} ${times.length} times`);
    if (!owedAt.has(key)) result.unowed.push(key);
  }
  return result;
}
