/**
 * A deterministic model of many TLS servers over a year, for the monitoring simulation: each name is
 * served by one or more nodes (addresses) whose operators renew their certificates on time, late, or
 * not at all, and at different moments on different nodes (one node may be forgotten altogether);
 * some chains carry an intermediate that expires before the leaf; servers go down for outages, and
 * some nodes drop single connections at random. It answers certkeeper's checks as a
 * CertificateSource, and it is the ground truth the simulation's oracle judges alerts against.
 */
import type { CertificateSource, CheckTarget, KnownCertificate } from "../../core/monitor/certificate_source.ts";
import type { CheckOutcome } from "../../core/monitor/check_apply.ts";
import { outcomeOfEndpoints, type EndpointOutcome } from "../../core/monitor/endpoints_outcome.ts";
import type { CertificateDetails, ChainCertificate, RevocationAnswer } from "../../core/base/records.ts";
import { LeafRevocation, type RevocationChecker } from "../../core/revocation/mod.ts";
import type { AriClient } from "../../core/ari/mod.ts";
import { judgeCaa, presentCaaRecord } from "../../core/dns/mod.ts";
import type { FetchRequest, FetchResult, HttpFetcher } from "../../core/net/mod.ts";
import type { Clock } from "../../core/base/time.ts";
import { DAY, HOUR, MINUTE } from "../../core/base/time.ts";

/** mulberry32: a small seeded PRNG, so every run simulates the same year. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Draws from one shared stream, or from a stream per key (a name, a serial). */
class Draws {
  readonly #streams = new Map<string, () => number>();
  constructor(
    private readonly random: () => number,
    private readonly streamOf?: (key: string) => () => number,
  ) {}

  of(key: string): () => number {
    if (!this.streamOf) return this.random;
    let stream = this.#streams.get(key);
    if (!stream) this.#streams.set(key, (stream = this.streamOf(key)));
    return stream;
  }
}

/** A seed of `key`'s own, from `seed` (FNV-1a over its characters). */
export function seedOf(seed: number, key: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

export interface ServedCertificate {
  serial: string;
  /** Served from this moment on (until the next one's `from`). */
  from: number;
  notBefore: number;
  notAfter: number;
  /** An intermediate above it that expires before it, or none. */
  intermediate: ChainCertificate | null;
  /** When its CA revoked it (ground truth), if ever. */
  revokedAt?: number;
  /**
   * When its CA moved its ARI window into the past, asking for early replacement (ground truth), if
   * ever; the window is then [incidentAt - 2 h, incidentAt - 1 h].
   */
  incidentAt?: number;
  /**
   * When its CA, having asked, moved the window's end earlier still, asking again (ground truth), if
   * ever; the window is then [incidentAt - 4 h, incidentAt - 3 h].
   */
  askedAgainAt?: number;
  /** Its fingerprint once its intermediate has lapsed, made once. */
  lapsedFingerprint?: string;
}

export interface SimulatedNode {
  address: string;
  certificates: ServedCertificate[];
  /**
   * A CDN node mid-rollout: for 12 hours after it starts serving a new certificate, each connection
   * gets the new one or the one before, at random.
   */
  alternating?: boolean;
}

export interface SimulatedServer {
  domain: string;
  nodes: SimulatedNode[];
  /** Every certificate any node serves, by serial. */
  certificates: ServedCertificate[];
  /** [from, to) periods in which every connection fails. */
  outages: Array<[number, number]>;
  /**
   * [from, to) periods in which one node of several (its index in `nodes`) fails every connection
   * while the others answer: a node down for maintenance, or down when the name was added.
   */
  nodeOutages?: Array<{ node: number; from: number; to: number }>;
  /** Probability that any one connection fails on its own (a flapping node). */
  flakiness: number;
  alertThresholds: number[];
  /** Its CA publishes renewal information (ARI) for its certificates. */
  ari: boolean;
  /** When the operator's ACME client stopped renewing (policy "stalls"), if it did. */
  stalledAt?: number;
  /**
   * The name's CAA records: `0 issue "sim-ca.example"` (the simulated CA's domain) except in these
   * periods, when its one `issue` record names `value` instead and so forbids the renewal. Absent: no
   * CAA records at all.
   */
  caa?: Array<{ from: number; to: number; value: string }>;
}

/**
 * How the operator's ACME client renews: "on-time" at two thirds of the lifetime (half under 10 days),
 * give or take 5 %; "late" after the renewal deadline but before expiry; "lapses" a few days after
 * expiry; "stalls" on time until it silently stops, the operator then noticing a few days after expiry;
 * "yearly" 30 days before expiry (a 365-day certificate renewed by hand).
 */
export type RenewalPolicy = "on-time" | "late" | "lapses" | "yearly" | "stalls";

/**
 * What one check of a server saw: when, and the serial of the earliest-expiring leaf among the nodes
 * that answered (null: none did), with the intermediate above it that expires before it.
 */
export interface CheckRecord {
  at: number;
  serial: string | null;
  intermediate: string | null;
  /** The CAA record the check read, in presentation form; null when the name has none or the lookup failed. */
  caa?: string | null;
}

function sameSeen(seen: Omit<CheckRecord, "at">, serial: string | null, intermediate: string | null, caa: string | null | undefined): boolean {
  return seen.serial === serial && seen.intermediate === intermediate && seen.caa === caa;
}

/**
 * Every check of one server, in time order, kept compact: a year of 10,000 certificates is 15 million
 * checks, which as one object each held most of the simulation's memory (and its collector's time).
 * Each check is its time and the index of what it saw among the few distinct things this server showed.
 */
export class CheckLog {
  readonly #times: number[] = [];
  readonly #kinds: number[] = [];
  readonly #seen: Array<Omit<CheckRecord, "at">> = [];

  get length(): number {
    return this.#times.length;
  }

  /** Records a check at `at` that saw this (most checks see what the one before saw). */
  push(at: number, serial: string | null, intermediate: string | null, caa?: string | null): void {
    // In time order: searches bisect by time (firstAtOrAfter).
    if (at < (this.#times.at(-1) ?? -Infinity)) throw new Error(`a check at ${at} logged after one at ${this.#times.at(-1)}`);
    const seen = this.#seen;
    const last = this.#kinds.at(-1);
    let kind = last !== undefined && sameSeen(seen[last]!, serial, intermediate, caa) ? last : seen.findIndex((s) => sameSeen(s, serial, intermediate, caa));
    if (kind === -1) kind = seen.push({ serial, intermediate, caa }) - 1;
    this.#times.push(at);
    this.#kinds.push(kind);
  }

  get(index: number): CheckRecord {
    return { at: this.#times[index]!, ...this.#seen[this.#kinds[index]!]! };
  }

  *[Symbol.iterator](): IterableIterator<CheckRecord> {
    for (let i = 0; i < this.#times.length; i++) yield this.get(i);
  }

  /** The index of the first check at or after `at` (the log is in time order), by bisection. */
  firstAtOrAfter(at: number): number {
    let low = 0;
    let high = this.#times.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#times[mid]! < at) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  /** The first check from `from` to `to` (times, inclusive; default: all of them) that `predicate` accepts. */
  find(predicate: (record: CheckRecord) => boolean, from = -Infinity, to = Infinity): CheckRecord | undefined {
    const times = this.#times;
    for (let i = this.firstAtOrAfter(from); i < times.length && times[i]! <= to; i++) {
      const record = this.get(i);
      if (predicate(record)) return record;
    }
    return undefined;
  }

  some(predicate: (record: CheckRecord) => boolean): boolean {
    return this.find(predicate) !== undefined;
  }
}

/** The simulated CA's CAA domain, and the identity mapping checks judge CAA with. */
export const SIMULATED_CAA_DOMAIN = "sim-ca.example";

export interface ServerOptions {
  start: number;
  end: number;
  policy: RenewalPolicy;
  outages: number;
  flakiness: number;
  alertThresholds: number[];
  /** Nodes behind the name (default 1); each renews on its own schedule. */
  nodes?: number;
  /** One node never renews after its first certificate. */
  forgottenNode?: boolean;
  /** The chain's intermediate expires 10-40 days before the leaf. */
  shortIntermediate?: boolean;
  /** One node (not a forgotten one) alternates between the old and the new certificate while it rolls a renewal out. */
  alternatingNode?: boolean;
  /** The certificates' lifetime; default 90 days (365 for "yearly"). */
  lifetime?: number;
  /** The CA moves the name to another lifetime: certificates issued from `at` on live `lifetime`. */
  lifetimeChange?: { at: number; lifetime: number };
  /** The CA publishes renewal information (ARI) for them. */
  ari?: boolean;
  /** The name's CAA records, with periods in which they forbid the simulated CA (see SimulatedServer.caa). */
  caa?: Array<{ from: number; to: number; value: string }>;
}

/**
 * The OCSP responder of the simulated CA: answers with a nextUpdate `nextUpdateMs` ahead, fails now and
 * then, and records every question, so the simulation can tell whether anyone asked too often.
 */
export class SimulatedResponder {
  readonly nextUpdateMs = 4 * DAY;
  readonly failureRate = 0.05;
  /** serial → every question, in order: when, and until when the answer given (if any) held. */
  readonly asks = new Map<string, Array<{ at: number; validUntil: number | null }>>();

  readonly #draws: Draws;

  /** `random` for every question, or with `streamOf` a stream of draws of each serial's own. */
  constructor(random: () => number, streamOf?: (key: string) => () => number) {
    this.#draws = new Draws(random, streamOf);
  }

  answer(cert: ServedCertificate, now: number): RevocationAnswer | null {
    const asks = this.asks.get(cert.serial) ?? [];
    this.asks.set(cert.serial, asks);
    if (this.#draws.of(cert.serial)() < this.failureRate) {
      asks.push({ at: now, validUntil: null });
      return null; // the responder is down: unavailable, asked again at the next check
    }
    const revoked = cert.revokedAt !== undefined && cert.revokedAt <= now;
    const validUntil = now + this.nextUpdateMs;
    asks.push({ at: now, validUntil });
    return revoked
      ? { status: "revoked", source: "ocsp", checkedAt: now, revokedAt: cert.revokedAt!, reason: "keyCompromise", validUntil }
      : { status: "good", source: "ocsp", checkedAt: now, revokedAt: null, reason: null, validUntil };
  }
}

export class SimulatedInternet implements CertificateSource {
  readonly servers = new Map<string, SimulatedServer>();
  /** Every check of each server, in order: what certkeeper could have known, and when. */
  readonly log = new Map<string, CheckLog>();
  /**
   * What each node of a name of several nodes answered at a check (its leaf's serial, or null when it
   * failed), by domain and the check's index in its log; kept only for the checks at which some node
   * did not answer with the leaf its schedule says (a flapping node, one alternating mid-rollout).
   * The others answered as {@link SimulatedInternet.servedAt} says. See {@link SimulatedInternet.answersAt}.
   */
  readonly answers = new Map<string, Map<number, Array<string | null>>>();
  checks = 0;
  failures = 0;

  readonly #leafRevocation = new LeafRevocation(true);

  constructor(
    private readonly clock: Clock,
    private readonly random: () => number,
    /** Revocation as a check asks it: the real checker's cache in front of the simulated responder. */
    private readonly revocation?: { checker: RevocationChecker; responder: SimulatedResponder },
    /**
     * With it, what a check draws (a dropped connection, a failed CAA lookup, the old leaf of a rollout)
     * comes from a stream of its name's own: a name's checks then meet the same luck whatever order
     * the checks of all names run in, so a run repeats. Without it, every draw is `random`'s.
     */
    streamOf?: (key: string) => () => number,
  ) {
    this.#draws = new Draws(random, streamOf);
  }

  readonly #draws: Draws;

  /** Renewal information as a check asks for it: the real ARI client in front of {@link SimulatedInternet.caFetcher}. */
  ari?: AriClient;

  /** The ACME directory of the simulated CA (ARI's issuer name is "Simulated CA"). */
  static readonly CA_DIRECTORY = "https://acme.sim.example/directory";
  /** Renewal-information requests the simulated CA answered, by serial. */
  readonly ariAsks = new Map<string, number[]>();

  /**
   * The simulated CA's ACME directory and renewal information (RFC 9773): a usual window from 55 % to
   * 70 % of the lifetime; after an incident, a window that ended an hour before it; Retry-After 6 h.
   */
  readonly caFetcher: HttpFetcher = {
    fetch: async (request: FetchRequest): Promise<FetchResult> => {
      const json = (status: number, body: unknown, headers: Record<string, string> = {}): FetchResult => ({
        status,
        headers: { "content-type": "application/json", ...headers },
        body: new TextEncoder().encode(JSON.stringify(body)),
      });
      if (request.url === SimulatedInternet.CA_DIRECTORY) return json(200, { renewalInfo: "https://acme.sim.example/ari" });
      const serial = decodeURIComponent(request.url.slice("https://acme.sim.example/ari/sim.".length));
      const cert = this.#bySerial.get(serial);
      if (!cert) return json(404, { type: "urn:ietf:params:acme:error:malformed" });
      const now = this.clock.now();
      const asks = this.ariAsks.get(serial);
      if (asks) asks.push(now);
      else this.ariAsks.set(serial, [now]);
      const window = SimulatedInternet.ariWindow(cert, now);
      // The same window is the same answer: encoded once (a year asks a million times at 10,000 names).
      const key = `${serial} ${window.start} ${window.end}`;
      let body = this.#ariBodies.get(key);
      if (!body) {
        const rfc3339 = (ms: number) => new Date(ms).toISOString();
        body = new TextEncoder().encode(JSON.stringify({ suggestedWindow: { start: rfc3339(window.start), end: rfc3339(window.end) } }));
        this.#ariBodies.set(key, body);
      }
      return { status: 200, headers: { "content-type": "application/json", "retry-after": "21600" }, body };
    },
  };

  /** The window the simulated CA suggests for `cert` at `now` (whole seconds, as RFC 3339 carries them). */
  static ariWindow(cert: ServedCertificate, now: number): { start: number; end: number } {
    const second = (ms: number) => Math.floor(ms / 1000) * 1000;
    if (cert.incidentAt !== undefined && cert.askedAgainAt !== undefined && cert.askedAgainAt <= now) {
      return { start: second(cert.incidentAt - 4 * HOUR), end: second(cert.incidentAt - 3 * HOUR) };
    }
    if (cert.incidentAt !== undefined && cert.incidentAt <= now) return { start: second(cert.incidentAt - 2 * HOUR), end: second(cert.incidentAt - HOUR) };
    const lifetime = cert.notAfter - cert.notBefore;
    return { start: second(cert.notBefore + lifetime * 0.55), end: second(cert.notBefore + lifetime * 0.7) };
  }

  readonly #bySerial = new Map<string, ServedCertificate>();
  readonly #ariBodies = new Map<string, Uint8Array>();

  /**
   * The CA of `server` asks, from `at`, for the certificate its single node serves then to be replaced
   * early; with `askAgainAfter`, it asks again that long after, the window's end moved earlier still.
   */
  incident(server: SimulatedServer, at: number, replaceAfter: number | null, askAgainAfter: number | null = null): ServedCertificate {
    const node = server.nodes[0]!;
    const served = SimulatedInternet.servedAt(node, at);
    const cert = server.certificates.find((c) => c.serial === served.serial)!;
    cert.incidentAt = at;
    served.incidentAt = at;
    if (askAgainAfter !== null) cert.askedAgainAt = served.askedAgainAt = at + askAgainAfter;
    if (replaceAfter !== null) {
      // Whole seconds, as X.509 times are.
      const from = Math.floor((at + replaceAfter) / 1000) * 1000;
      const lifetime = cert.notAfter - cert.notBefore;
      const replacement = { serial: `${cert.serial}-reissued`, from, notBefore: from - HOUR, notAfter: from - HOUR + lifetime, intermediate: null };
      insertByFrom(node, replacement);
      server.certificates.push({ ...replacement });
      this.#bySerial.set(replacement.serial, server.certificates.at(-1)!);
    }
    return cert;
  }

  /**
   * Revokes the certificate node `nodeIndex` of `server` serves at `at`, on every node that serves it
   * (nodes renewed together share one); with `replaceAfter`, the operator replaces it that long after
   * (a new serial, valid 90 days) on each node that served it then, rolled out node after node a few
   * minutes apart, else it keeps being served until each node's planned renewal.
   */
  revoke(server: SimulatedServer, at: number, replaceAfter: number | null, nodeIndex = 0): ServedCertificate {
    const served = SimulatedInternet.servedAt(server.nodes[nodeIndex]!, at);
    const cert = server.certificates.find((c) => c.serial === served.serial)!;
    cert.revokedAt = at;
    for (const node of server.nodes) for (const copy of node.certificates) if (copy.serial === cert.serial) copy.revokedAt = at;
    if (replaceAfter !== null) {
      // Whole seconds, as X.509 times are.
      const from = Math.floor((at + replaceAfter) / 1000) * 1000;
      const replacement = { serial: `${cert.serial}-replacement`, from, notBefore: from - HOUR, notAfter: from + 90 * DAY, intermediate: null };
      let rolled = 0;
      for (const node of server.nodes) {
        if (SimulatedInternet.servedAt(node, at).serial !== cert.serial) continue;
        insertByFrom(node, { ...replacement, from: from + rolled++ * 5 * MINUTE });
      }
      server.certificates.push({ ...replacement });
      this.#bySerial.set(replacement.serial, server.certificates.at(-1)!);
    }
    return cert;
  }

  /** A server whose nodes' certificates over [start, end) follow `policy`. */
  addServer(domain: string, options: ServerOptions): SimulatedServer {
    const r = this.random;
    const lifetime = options.lifetime ?? (options.policy === "yearly" ? 365 * DAY : 90 * DAY);
    /** The lifetime of a certificate issued at `notBefore`: the CA's new one from its change on. */
    const lifetimeAt = (notBefore: number) => (options.lifetimeChange && notBefore >= options.lifetimeChange.at ? options.lifetimeChange.lifetime : lifetime);
    // When a stalling client stops: somewhere in the year.
    const stalledAt = options.policy === "stalls" ? options.start + Math.floor(r() * (options.end - options.start)) : undefined;
    // The first certificate was issued somewhere in the lifetime before the start (in its first half,
    // for a lifetime of a few days or less); every node has it.
    const firstNotBefore = options.start - Math.floor(r() * (lifetime > 4 * DAY ? lifetime - 2 * DAY : lifetime / 2));
    const nodeCount = options.nodes ?? 1;
    const forgotten = options.forgottenNode ? Math.floor(r() * nodeCount) : -1;
    const nodes: SimulatedNode[] = [];
    const bySerial = new Map<string, ServedCertificate>();
    let serialCounter = 1;
    for (let n = 0; n < nodeCount; n++) {
      const certificates: ServedCertificate[] = [];
      let notBefore = firstNotBefore;
      let from = options.start - 400 * DAY;
      while (from < options.end) {
        const life = lifetimeAt(notBefore);
        const short = life < 10 * DAY;
        const notAfter = notBefore + life;
        // Nodes renewed together get the same certificate (one serial); the first node sets it.
        let cert = [...bySerial.values()].find((c) => c.notBefore === notBefore);
        if (!cert) {
          const intermediate = options.shortIntermediate
            ? { subject: "Simulated Intermediate", issuer: "Simulated Root", serialNumber: `${domain}/ica#${serialCounter}`, notAfter: notAfter - (10 + Math.floor(r() * 30)) * DAY }
            : null;
          cert = { serial: `${domain}#${serialCounter++}`, from, notBefore, notAfter, intermediate };
          bySerial.set(cert.serial, cert);
        }
        certificates.push({ ...cert, from });
        if (n === forgotten) break; // never renewed: serves its first certificate all year
        // Each node is renewed at its own moment, hours to days apart.
        const deadline = notBefore + life * (short ? 2 / 3 : 3 / 4);
        // With renewal information, the client renews inside the CA's window (55-70 % of the lifetime).
        const onTime = options.ari
          ? notBefore + life * (0.55 + r() * 0.14)
          : notBefore + life * (short ? 1 / 2 : 2 / 3) + (r() - 0.5) * 0.1 * life;
        const renewAt =
          options.policy === "late"
            ? notAfter - Math.floor(r() * Math.min(10 * DAY, (notAfter - deadline) * 0.9))
            : options.policy === "lapses"
              ? notAfter + Math.floor(r() * 6 * DAY) // the operator notices a few days after expiry
              : options.policy === "yearly"
                ? notAfter - 30 * DAY - Math.floor(r() * 2 * DAY)
                : stalledAt !== undefined && onTime >= stalledAt
                  ? notAfter + DAY + Math.floor(r() * 2 * DAY) // stalled: noticed a day or more after expiry
                  : Math.floor(onTime);
        from = renewAt;
        // Renewed nodes of one name share the renewal's certificate when renewed within a day (an hour, for a short lifetime).
        const grain = short ? HOUR : DAY;
        notBefore = nodeCount > 1 ? Math.floor(renewAt / grain) * grain : renewAt - HOUR;
      }
      nodes.push({ address: `192.0.2.${n + 1}`, certificates });
    }
    if (options.alternatingNode && nodeCount > 1) {
      const candidates = nodes.filter((_, i) => i !== forgotten);
      candidates[Math.floor(r() * candidates.length)]!.alternating = true;
    }
    const outages: Array<[number, number]> = [];
    for (let i = 0; i < options.outages; i++) {
      const at = options.start + Math.floor(r() * (options.end - options.start));
      outages.push([at, at + HOUR + Math.floor(r() * 3 * DAY)]);
    }
    const server: SimulatedServer = {
      domain,
      nodes,
      certificates: [...bySerial.values()],
      outages,
      flakiness: options.flakiness,
      alertThresholds: options.alertThresholds,
      ari: options.ari ?? false,
      ...(options.caa ? { caa: options.caa } : {}),
      ...(stalledAt !== undefined ? { stalledAt } : {}),
    };
    for (const cert of server.certificates) this.#bySerial.set(cert.serial, cert);
    this.servers.set(domain, server);
    return server;
  }

  /**
   * Every certificate issued, as a Certificate Transparency search service (Cert Spotter's issuances
   * API) lists them: logged at their notBefore, in that order, each with an increasing id. Build it
   * once the servers are set up; {@link SimulatedInternet.ctFetcher} serves it.
   */
  logIssuances(): void {
    const all = [...this.servers.values()].flatMap((server) => server.certificates.map((cert) => ({ cert, domain: server.domain })));
    all.sort((a, b) => a.cert.notBefore - b.cert.notBefore || (a.cert.serial < b.cert.serial ? -1 : 1));
    this.#issuances = all.map(({ cert, domain }, i) => ({ id: String(1_000_000 + i), domain, cert }));
  }

  #issuances: Array<{ id: string; domain: string; cert: ServedCertificate }> = [];

  /** The CT search service over {@link SimulatedInternet.logIssuances}' log: what is issued by now, after `after`. */
  readonly ctFetcher: HttpFetcher = {
    fetch: async (request: FetchRequest): Promise<FetchResult> => {
      const params = new URL(request.url).searchParams;
      const after = params.get("after");
      const now = this.clock.now();
      const page: unknown[] = [];
      // Ids are positions in the log: the page starts right after `after`.
      for (let i = after === null ? 0 : Number(after) - 1_000_000 + 1; i < this.#issuances.length; i++) {
        const { id, domain, cert } = this.#issuances[i]!;
        if (cert.notBefore > now || page.length === 100) break;
        page.push({
          id,
          dns_names: [domain],
          issuer: { friendly_name: "Simulated CA", name: "CN=Simulated CA" },
          not_before: new Date(cert.notBefore).toISOString(),
          not_after: new Date(cert.notAfter).toISOString(),
          cert_sha256: Buffer.from(cert.serial.padEnd(32, "#")).subarray(0, 32).toString("hex"),
        });
      }
      return { status: 200, headers: { "content-type": "application/json" }, body: new TextEncoder().encode(JSON.stringify(page)) };
    },
  };

  /** The certificate `node` serves at `at`. */
  static servedAt(node: SimulatedNode, at: number): ServedCertificate {
    let current = node.certificates[0]!;
    for (const cert of node.certificates) if (cert.from <= at) current = cert;
    return current;
  }

  /** Whether some node of `server` may not answer though the name does: it flaps, or has outages of its own. */
  static partial(server: SimulatedServer): boolean {
    return server.flakiness > 0 || (server.nodeOutages?.length ?? 0) > 0;
  }

  static down(server: SimulatedServer, at: number): boolean {
    return server.outages.some(([from, to]) => from <= at && at < to);
  }

  /**
   * What the nodes of `domain` answered at each successful check made at `at`, one array per check, in
   * the order of `server.nodes`: each node's leaf serial, or null when it did not answer.
   */
  answersAt(domain: string, at: number): Array<Array<string | null>> {
    const server = this.servers.get(domain)!;
    const log = this.checksOf(domain);
    const recorded = this.answers.get(domain);
    const result: Array<Array<string | null>> = [];
    for (let i = log.firstAtOrAfter(at); i < log.length && log.get(i).at === at; i++) {
      if (log.get(i).serial === null) continue;
      result.push(recorded?.get(i) ?? server.nodes.map((node) => SimulatedInternet.servedAt(node, at).serial));
    }
    return result;
  }

  /** The checks of `domain`, in order (none when it was never checked). */
  checksOf(domain: string): CheckLog {
    return this.log.get(domain) ?? new CheckLog();
  }

  async inspect(target: CheckTarget, known?: KnownCertificate): Promise<CheckOutcome> {
    const { domain } = target;
    this.checks++;
    const server = this.servers.get(domain);
    const now = this.clock.now();
    if (!server) return { ok: false, reason: "dns_error", message: `${domain} does not resolve`, endpoints: [] };
    let log = this.log.get(domain);
    if (!log) this.log.set(domain, (log = new CheckLog()));
    const down = SimulatedInternet.down(server, now);
    const endpoints: EndpointOutcome[] = [];
    for (const [index, node] of server.nodes.entries()) {
      const nodeDown = server.nodeOutages?.some((outage) => outage.node === index && outage.from <= now && now < outage.to) ?? false;
      endpoints.push(await this.#node(domain, node, down || nodeDown || this.#draws.of(domain)() < server.flakiness, known, now));
    }
    if (server.nodes.length > 1) {
      const answered = endpoints.map((endpoint) => endpoint.details?.serialNumber ?? null);
      if (answered.some((serial) => serial !== null) && answered.some((serial, i) => serial !== SimulatedInternet.servedAt(server.nodes[i]!, now).serial)) {
        let byCheck = this.answers.get(domain);
        if (!byCheck) this.answers.set(domain, (byCheck = new Map()));
        byCheck.set(log.length, answered);
      }
    }
    const outcome = outcomeOfEndpoints(endpoints);
    if (!outcome.ok) {
      this.failures++;
      log.push(now, null, null);
    } else {
      const above = outcome.details.chainExpiry;
      let caa: string | null = null;
      // What DNS says (CAA), judged by certkeeper's own rule; one lookup in twenty fails, keeping the last verdict.
      if (server.caa && this.#draws.of(domain)() >= 0.05) {
        const value = server.caa.find((period) => period.from <= now && now < period.to)?.value ?? SIMULATED_CAA_DOMAIN;
        const records = [{ flags: 0, tag: "issue", value }];
        const sets = new Map([[domain, { from: domain, setAt: domain, records }]]);
        const verdict = judgeCaa({
          domain,
          subjectAlternativeNames: outcome.details.subjectAlternativeNames,
          issuerNames: ["Simulated CA"],
          identities: [{ name: "Simulated CA", domain: SIMULATED_CAA_DOMAIN }],
          sets,
        });
        outcome.dns = { caaSets: [{ from: domain, setAt: domain, records }], caa: verdict };
        outcome.caaAnswered = true;
        caa = presentCaaRecord(records[0]!);
      }
      log.push(now, outcome.details.serialNumber, above && above.notAfter < outcome.details.notAfter ? above.serialNumber : null, caa);
    }
    return outcome;
  }

  async #node(domain: string, node: SimulatedNode, failing: boolean, known: KnownCertificate | undefined, now: number): Promise<EndpointOutcome> {
    if (failing) {
      return { address: node.address, fingerprint: null, details: null, problem: null, failure: "timeout", tls: null, message: `${domain}:443 did not complete the connection in time` };
    }
    let cert = SimulatedInternet.servedAt(node, now);
    if (node.alternating) {
      const index = node.certificates.indexOf(cert);
      if (index > 0 && now < cert.from + 12 * HOUR && this.#draws.of(domain)() < 0.5) cert = node.certificates[index - 1]!;
    }
    // An intermediate past its notAfter breaks the trusted path: the chain is then untrusted.
    const lapsed = cert.intermediate !== null && now > cert.intermediate.notAfter;
    const fresh = details(domain, cert, lapsed, this.servers.get(domain)!.ari);
    // What certkeeper knew of this leaf: the record's details or one of its endpoints'.
    let knownLeaf = known?.details.serialNumber === cert.serial ? known.details : undefined;
    for (const endpoint of known?.endpoints ?? []) if (!knownLeaf && endpoint.details?.serialNumber === cert.serial) knownLeaf = endpoint.details;
    // As the real source does (core/monitor/certificate_source.ts): the stored details object itself when
    // it describes this very leaf in the same state, and a new one only for what changed, so that an
    // unchanged re-check is saved as unchanged, as in production.
    let described = knownLeaf && sameDescription(knownLeaf, fresh) ? knownLeaf : fresh;
    if (this.ari && fresh.ariCertId && now <= cert.notAfter) {
      const previous = knownLeaf?.renewalInfo;
      const renewalInfo = await this.ari.renewalInfo({ certId: fresh.ariCertId, issuerNames: fresh.issuerNames!, notBefore: cert.notBefore, notAfter: cert.notAfter }, previous, now);
      if (renewalInfo !== described.renewalInfo) described = { ...described, renewalInfo };
    } else if (described.renewalInfo !== undefined) {
      const { renewalInfo: _, ...rest } = described;
      described = rest;
    }
    if (this.revocation) {
      const { checker, responder } = this.revocation;
      const previous = knownLeaf?.revocation;
      const revocation = await this.#leafRevocation.state({
        previous,
        ask: () => checker.answer(`simulated-ca:${cert.serial}`, now, async () => responder.answer(cert, now)),
        now,
      });
      if (revocation !== described.revocation) described = { ...described, revocation };
    }
    return {
      address: node.address,
      fingerprint: lapsed ? (cert.lapsedFingerprint ??= `${cert.serial}/lapsed`) : cert.serial,
      details: described,
      problem: lapsed ? "untrusted_issuer" : null,
      failure: null,
      tls: SIMULATED_TLS,
    };
  }
}

/** Whether stored details describe the leaf as `fresh` does (the fields the simulation sets). */
function sameDescription(stored: CertificateDetails, fresh: CertificateDetails): boolean {
  const expiryOf = (details: CertificateDetails) => (details.chainExpiry ? `${details.chainExpiry.serialNumber}/${details.chainExpiry.notAfter}` : null);
  return (
    stored.serialNumber === fresh.serialNumber &&
    stored.notBefore === fresh.notBefore &&
    stored.notAfter === fresh.notAfter &&
    stored.subject === fresh.subject &&
    stored.ariCertId === fresh.ariCertId &&
    expiryOf(stored) === expiryOf(fresh)
  );
}

/** What every handshake agrees on (shared: the monitor never changes it). */
const SIMULATED_TLS = Object.freeze({ protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" });

/** Puts `cert` among the node's certificates in the order they are served from. */
function insertByFrom(node: SimulatedNode, cert: ServedCertificate): void {
  const at = node.certificates.findIndex((c) => c.from > cert.from);
  if (at === -1) node.certificates.push(cert);
  else node.certificates.splice(at, 0, cert);
}

/** Each served certificate's details, made once per (lapsed, ari) pair: index lapsed * 2 + ari. */
const cache = new WeakMap<ServedCertificate, Array<CertificateDetails | undefined>>();

function details(domain: string, cert: ServedCertificate, lapsed: boolean, ari: boolean): CertificateDetails {
  let kinds = cache.get(cert);
  if (!kinds) cache.set(cert, (kinds = []));
  const index = (lapsed ? 2 : 0) + (ari ? 1 : 0);
  const known = kinds[index];
  if (known) return known;
  const iso = (ms: number) => new Date(ms).toISOString();
  const made: CertificateDetails = {
    serialNumber: cert.serial,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    issuer: "Simulated CA",
    subject: domain,
    subjectAlternativeNames: [domain],
    signatureAlgorithm: "ecdsa-with-SHA256",
    chain: [{ subject: domain, issuer: "Simulated CA", validFrom: iso(cert.notBefore), validTo: iso(cert.notAfter), serialNumber: cert.serial, fingerprintSha256: cert.serial }],
    chainExpiry: lapsed ? null : cert.intermediate,
    issuerNames: ["Simulated CA"],
    ariCertId: ari ? `sim.${encodeURIComponent(cert.serial)}` : null,
  };
  kinds[index] = made;
  return made;
}
