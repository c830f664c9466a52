/**
 * Builds certkeeper's core once: services, the request pipeline, the background workers. Adapters
 * supply the outside world (a store, a clock, transports) and mount what this returns.
 */
import { LEASE_MS, type Config } from "../config/config.ts";
import { maskUrl } from "../config/mod.ts";
import { systemClock, SECOND, type Clock } from "../base/time.ts";
import { createLogger, type Logger } from "../base/log.ts";
import { randomBase62 } from "../base/ids.ts";
import type { Store } from "../store/ports.ts";
import { resumeReadCache, stopReadCache, withReadCache } from "../store/read_cache.ts";
import { Authenticator } from "../auth/authenticate.ts";
import { MemoryRateLimiter, StoreRateLimiter } from "../auth/rate_limit.ts";
import { Admin, type PasswordHasher } from "../accounts/admin.ts";
import { TrustStore } from "../tls/trust_store.ts";
import { Monitor, type CheckObserver } from "../monitor/monitor.ts";
import { createScheduler } from "../monitor/scheduler.ts";
import { createLiveness } from "../monitor/liveness.ts";
import { Deliverer } from "../notify/deliverer.ts";
import { EventRetention } from "../notify/retention.ts";
import { ImportWorker, importLeaseMs, importTurnMs } from "../imports/import_worker.ts";
import type { Transports } from "../notify/ports.ts";
import { TlsCertificateSource, type CertificateSource } from "../monitor/certificate_source.ts";
import { ConnectionBudget } from "../net/connection_budget.ts";
import type { EndpointConnector } from "../tls/endpoint_retrieve.ts";
import { createApi, type Api } from "../http/api.ts";
import { callOperation, type Call } from "../pipeline/pipeline.ts";
import { OPERATIONS, type Operation, type OperationResult } from "../operations/mod.ts";
import type { Services } from "../operations/services.ts";
import { createAccounts, type Accounts } from "../accounts/mod.ts";
import { Console, Workspace } from "../workspace/mod.ts";
import { ServiceMetrics } from "../metrics/scrape.ts";
import { RevocationChecker } from "../revocation/mod.ts";
import { AriClient } from "../ari/mod.ts";
import { BUILT_IN_CAA_IDENTITIES, DnsClient, DnsInspector, systemDnsServers } from "../dns/mod.ts";
import { CtClient, WatchPoller } from "../watches/mod.ts";
import { CtFollower, RecordedIssuances, type CtFollowerOptions, type EntryReader } from "../ctlogs/mod.ts";
import { ctLogListAtStart } from "./ct_log_list.ts";
import { CertkeeperError } from "../base/errors.ts";
import type { WatchRecord } from "../base/records.ts";
import { addCertificate } from "../operations/mod.ts";

/**
 * How long a scheduled check's lease lasts. A leased certificate may wait for a slot (the scheduler
 * leases twice as many ahead as it runs, and claims again while half a round still waits: work_loop.ts)
 * and then for connections (shared with an import's checks); each check ahead of it in that queue
 * holds its connections for at most one TLS timeout. The lease counts every check that can be ahead
 * (4.5 × CHECK_CONCURRENCY) plus its own. In overload (every name
 * behind CHECK_CONCURRENCY addresses or more, every check running to its limit, an import beside) the
 * wait can be longer: a certificate that waited half its lease for a slot is then handed back instead
 * of started (scheduler.ts), and waits for the rest of its lease. A longer lease delays a dead
 * process's certificates (until its word lapses: monitor/liveness.ts), and those handed back.
 */
export function checkLeaseMs(config: Pick<Config, "tlsTimeoutMs" | "checkConcurrency">): number {
  return Math.max(LEASE_MS, config.tlsTimeoutMs * (4 * config.checkConcurrency + Math.floor(config.checkConcurrency / 2) + 1));
}

export interface CoreOptions {
  config: Config;
  store: Store;
  clock?: Clock;
  logger?: Logger;
  /** Trusted roots; default: the system roots plus config.extraCaFile. */
  trust?: TrustStore;
  /** Where check outcomes come from; default: real TLS. */
  source?: CertificateSource;
  /**
   * Who opens a real-TLS check's connections and reads the chains (the handshakes, most of a check's
   * CPU); default: the event loop. The wiring hands them to threads of their own (CERTKEEPER_CHECK_THREADS).
   */
  connector?: EndpointConnector;
  passwords?: PasswordHasher;
  /** How notifications leave the process; without them, deliveries wait in the outbox. */
  transports?: Transports;
  onCheck?: CheckObserver;
  /** Cut-off of one delivery attempt; default config.deliveryTimeoutMs (CERTKEEPER_DELIVERY_TIMEOUT). */
  deliveryTimeoutMs?: number;
  /** Jitter source for delivery retries (tests make it deterministic). */
  random?: () => number;
  /**
   * Where the CT log follower fetches and decodes the logs' entries (CERTKEEPER_CT_SOURCE=logs);
   * default: the event loop. The wiring hands them to a thread of their own.
   */
  ctEntryReader?: EntryReader;
  /** The CT log follower's timings (CERTKEEPER_CT_SOURCE=logs), for tests and benches; defaults otherwise. */
  ctFollower?: Partial<Pick<CtFollowerOptions, "leaseMs" | "headIntervalMs" | "listIntervalMs" | "watchSettleMs" | "runEntries" | "fetchesPerLog" | "firstBackoffMs">>;
}

export interface Core {
  services: Services;
  /** The HTTP face of the pipeline: Request in, Response out. */
  api: Api;
  /**
   * Calls an operation in-process through the same pipeline (principal, rate limit, permission,
   * validation): its result, or throws the CertkeeperError HTTP would answer with.
   *
   * @example
   * await core.call({ operation: addCertificate, caller: { kind: "host", principal }, body: { domain: "example.com" } });
   */
  call(call: Call): Promise<OperationResult>;
  /** The settings area's sessions, sign-in, keys, members and dashboard (adapters/web renders them). */
  accounts: Accounts & { workspace: Workspace; console: Console };
  operations: readonly Operation[];
  trust: TrustStore;
  /** Where check outcomes come from (real TLS unless CoreOptions.source said otherwise). */
  source: CertificateSource;
  /** Starts the background work: scheduled checks and the flushing of key usage. */
  start(): void;
  /** Stops background work, waiting for what is in flight. Does not close the store. */
  stop(): Promise<void>;
}

const USAGE_FLUSH_MS = 30 * SECOND;
/** How soon a key's use is written when its last recorded use is old (core/auth/authenticate.ts). */
const USE_WRITTEN_SOON_MS = SECOND;
/** Delivery attempts in flight in one process; they wait on the network, not on the CPU. */
const DELIVERY_CONCURRENCY = 32;
/**
 * Of which one organization may hold at most this many: its dead endpoints then leave most slots to
 * the others, and claims go to the least busy organization first.
 */
const DELIVERY_PER_ORGANIZATION = 8;

export function createCore(options: CoreOptions): Core {
  const { config } = options;
  const store = withReadCache(options.store);
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? createLogger(config.logLevel);
  const trust = options.trust ?? TrustStore.system(config.extraCaFile);
  const metrics = new ServiceMetrics();
  const fetcher = options.transports?.fetch;
  const revocation =
    config.revocation && fetcher
      ? new RevocationChecker({
          fetcher,
          cache: store.revocations,
          timeoutMs: config.tlsTimeoutMs,
          onRequest: ({ kind }) => metrics.revocationRequests.inc({ source: kind }),
          onFailure: ({ url, message }) => logger.debug("revocation source failed", { url, error: message }),
        })
      : null;
  const operatorFetcher = options.transports?.ctFetch;
  const owner = `proc_${randomBase62(12)}`;
  const ari =
    config.ari && operatorFetcher
      ? new AriClient({
          fetcher: operatorFetcher,
          cache: store.renewalInfo,
          owner,
          directories: config.acmeDirectories,
          timeoutMs: config.tlsTimeoutMs,
          onRequest: (result) => metrics.ariRequests.inc({ result }),
          onFailure: ({ url, message }) => logger.debug("renewal information request failed", { url: maskUrl(url), error: message }),
        })
      : null;
  const source =
    options.source ??
    new TlsCertificateSource({
      trust,
      retrieve: { timeoutMs: config.tlsTimeoutMs, rules: config.resolve, allowPrivateTargets: config.allowPrivateTargets },
      connector: options.connector,
      clock,
      revocation,
      ari,
      dns: dnsInspector(config, { fetcher, metrics, clock, logger }),
    });
  const pollMs = Math.min(SECOND, config.checkIntervalMs);
  const deliverer = options.transports
    ? new Deliverer({
        store,
        clock,
        logger,
        transports: options.transports,
        retryMs: config.deliveryRetryMs,
        mailFrom: config.mailFrom,
        pagerdutyUrl: config.pagerdutyUrl,
        telegramUrl: config.telegramUrl,
        owner,
        concurrency: DELIVERY_CONCURRENCY,
        perOrganization: DELIVERY_PER_ORGANIZATION,
        timeoutMs: options.deliveryTimeoutMs ?? config.deliveryTimeoutMs,
        pollMs,
        random: options.random,
        onAttempt: (result) => metrics.observeDelivery(result),
      })
    : undefined;
  const monitor = new Monitor({
    store,
    clock,
    source,
    logger,
    intervalMs: config.checkIntervalMs,
    alertPolicy: config.alertPolicy,
    connections: new ConnectionBudget(config.checkConcurrency),
    requestedConnections: new ConnectionBudget(config.checkConcurrency),
    onCheck: (result) => {
      metrics.observeCheck(result);
      options.onCheck?.(result);
    },
    onEvents: () => deliverer?.poke(),
  });
  const scheduler = createScheduler({
    store,
    clock,
    monitor,
    logger,
    owner,
    concurrency: config.checkConcurrency,
    leaseMs: checkLeaseMs(config),
    pollMs,
    intervalMs: config.checkIntervalMs,
  });
  const liveness = createLiveness({ store, owner, clock, logger });
  const imports = new ImportWorker({
    store,
    clock,
    logger,
    monitor,
    owner,
    concurrency: config.checkConcurrency,
    leaseMs: importLeaseMs(config.tlsTimeoutMs),
    turnMs: importTurnMs(config.tlsTimeoutMs),
    pollMs,
    onCreated: () => {
      scheduler.poke();
      deliverer?.poke();
    },
  });
  // A key's use not recorded for a while is written within a second (once started), not at the next flush.
  let soonTimer: ReturnType<typeof setTimeout> | undefined;
  const authenticator = new Authenticator(store, {
    onStale: () => {
      if (soonTimer || !usageTimer) return;
      soonTimer = setTimeout(() => {
        soonTimer = undefined;
        void flushUsage();
      }, USE_WRITTEN_SOON_MS);
      (soonTimer as { unref?: () => void }).unref?.();
    },
  });
  const services: Services = {
    config,
    store,
    clock,
    logger,
    authenticator,
    rateLimiter: store.shared ? new StoreRateLimiter(store.rateLimits) : new MemoryRateLimiter(),
    monitor,
    scheduler,
    deliveries: deliverer,
    admin: new Admin(store, clock, { passwords: options.passwords, logger }),
    metrics,
    retention: new EventRetention({ store, clock, logger, retentionMs: config.eventRetentionMs }),
    imports,
  };

  const ctFetch = options.transports?.ctFetch;
  // CERTKEEPER_CT_SOURCE=logs: the follower records issuances and raises their events; the watch
  // poller then reads what it recorded, for autoMonitor.
  const followLogs = config.ctSource === "logs";
  if (followLogs) ctLogListAtStart(config.ctLogList);
  const watchPoller = ctFetch
    ? new WatchPoller({
        store,
        clock,
        logger,
        client: followLogs
          ? new RecordedIssuances(store.ctLogs)
          : new CtClient({ fetcher: ctFetch, baseUrl: config.ctUrl, token: config.ctToken, timeoutMs: config.tlsTimeoutMs }),
        recordsIssuances: !followLogs,
        intervalMs: config.ctIntervalMs,
        owner,
        leaseMs: Math.max(LEASE_MS, config.tlsTimeoutMs * 3),
        pollMs,
        addCertificate: (watch, name) => addWatchedName(services, watch, name),
        onPoll: (result) => metrics.observeCtPoll(result),
        onEvents: () => deliverer?.poke(),
      })
    : undefined;

  if (watchPoller) services.watches = watchPoller.loop;
  const follower =
    followLogs && ctFetch
      ? new CtFollower({
          store,
          clock,
          logger,
          fetcher: ctFetch,
          owner,
          logList: config.ctLogList,
          requestTimeoutMs: config.tlsTimeoutMs * 3,
          // Renewed every quarter of it whatever the follower does, so it can be short: a dead holder's
          // follower is taken over within about 40 s by default.
          leaseMs: Math.max(config.tlsTimeoutMs * 3, 5 * SECOND),
          headIntervalMs: Math.min(30 * SECOND, config.ctIntervalMs),
          entryReader: options.ctEntryReader,
          issuanceRetentionMs: config.eventRetentionMs,
          ...options.ctFollower,
          onEntries: (log, count) => metrics.ctEntries.inc({ log }, count),
          onEvents: () => deliverer?.poke(),
          onRecorded: () => watchPoller?.loop.poke(),
        })
      : undefined;

  let usageTimer: ReturnType<typeof setInterval> | undefined;
  const flushUsage = () =>
    authenticator.flushUsage().catch((error) => logger.warn("could not record API key use", { error }));

  const api = createApi(services);
  return {
    services,
    api,
    call: (call) => callOperation(services, call),
    accounts: { ...createAccounts({ services, passwords: options.passwords }), workspace: new Workspace(services), console: new Console(services) },
    operations: OPERATIONS,
    trust,
    source,
    start() {
      resumeReadCache(store);
      // The trusted roots, listed and indexed before the first check needs them (tens of milliseconds,
      // most of it the platform listing its roots): at start when there are certificates to check, else
      // by the first check.
      void store.certificates
        .nextDueAt()
        .then((next) => (next !== null ? trust.ready() : undefined))
        // The store did not answer, or the roots could not be listed: the first check tries again (and says why).
        .catch(() => undefined);
      liveness.start();
      scheduler.start();
      deliverer?.loop.start();
      watchPoller?.loop.start();
      follower?.start();
      services.retention.start();
      imports.start();
      usageTimer ??= setInterval(flushUsage, USAGE_FLUSH_MS);
      (usageTimer as { unref?: () => void }).unref?.();
    },
    async stop() {
      clearInterval(usageTimer);
      usageTimer = undefined;
      clearTimeout(soonTimer);
      soonTimer = undefined;
      // Every worker told at once to take nothing new, then waited for: one after another, an import
      // kept starting items while the scheduler's check in flight ran out its time limit.
      await Promise.all([scheduler.stop(), watchPoller?.loop.stop(), follower?.stop(), deliverer?.loop.stop(), services.retention.stop(), imports.stop()]);
      // After the scheduler gave its leases back: its word is forgotten, nothing of it left to give.
      await liveness.stop();
      await flushUsage();
      // Last: a store that outlives this core (an embedding host's) must not keep its cache (started
      // again, from empty, with the core).
      stopReadCache(store);
    },
  };
}

/**
 * What reads DNS for checks (CONTRACT §22): the resolvers of CERTKEEPER_DNS_SERVERS, or the system's;
 * null when they are `off` or none is known. MTA-STS policies are read through `fetcher`.
 */
function dnsInspector(
  config: Config,
  { fetcher, metrics, clock, logger }: { fetcher: Transports["fetch"]; metrics: ServiceMetrics; clock: Clock; logger: Logger },
): DnsInspector | null {
  const servers = config.dnsServers === "off" ? [] : config.dnsServers === "system" ? systemDnsServers() : config.dnsServers;
  if (servers.length === 0) {
    if (config.dnsServers === "system") logger.warn("no resolver in /etc/resolv.conf: CAA, DANE and MTA-STS are not judged; set CERTKEEPER_DNS_SERVERS");
    return null;
  }
  return new DnsInspector({
    client: new DnsClient(servers, { onLookup: (lookup) => metrics.dnsLookups.inc(lookup) }),
    systemResolvers: config.dnsServers === "system",
    fetcher,
    timeoutMs: config.tlsTimeoutMs,
    identities: [...config.caaIdentities, ...BUILT_IN_CAA_IDENTITIES],
    clock,
    logger,
  });
}

/**
 * autoMonitor's add (CONTRACT §15): the name on port 443, through the pipeline as POST
 * /v1/certificates would add it for an owner of the watch's organization and mode. False when the
 * name is already monitored; throws with the reason it could not be added (no certificate, plan limit).
 */
async function addWatchedName(services: Services, watch: WatchRecord, name: string): Promise<boolean> {
  const { store } = services;
  if (await store.certificates.findByDomain(watch, { domain: name, port: 443, protocol: "tls", connectTo: null })) return false;
  const organization = await store.organizations.get(watch.organizationId);
  if (!organization) throw new Error("the organization no longer exists");
  const principal = { keyId: `watch:${watch.id}`, userId: "", role: "owner" as const, scope: { organizationId: watch.organizationId, mode: watch.mode }, limits: organization.limits };
  try {
    await callOperation(services, { operation: addCertificate, caller: { kind: "host", principal }, body: { domain: name } });
    return true;
  } catch (error) {
    if (error instanceof CertkeeperError && error.code === "duplicate_domain") return false;
    throw error;
  }
}
