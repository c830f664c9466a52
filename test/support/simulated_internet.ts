/**
 * A deterministic model of many TLS servers over a year, for the monitoring simulation: each server
 * serves a certificate that its operator renews (on time, late, or not at all), goes down for
 * outages, and some drop single connections at random. It answers certkeeper's checks as a
 * CertificateSource, and it is the ground truth the simulation's oracle judges alerts against.
 */
import type { CertificateSource, KnownCertificate } from "../../core/monitor/certificate_source.ts";
import type { CheckOutcome } from "../../core/monitor/check_apply.ts";
import type { CertificateDetails, RevocationAnswer } from "../../core/base/records.ts";
import { LeafRevocation, type RevocationChecker } from "../../core/revocation/mod.ts";
import type { Clock } from "../../core/base/time.ts";
import { DAY, HOUR } from "../../core/base/time.ts";

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

export interface ServedCertificate {
  serial: string;
  /** Served from this moment on (until the next one's `from`). */
  from: number;
  notBefore: number;
  notAfter: number;
  /** When its CA revoked it (ground truth), if ever. */
  revokedAt?: number;
}

export interface SimulatedServer {
  domain: string;
  certificates: ServedCertificate[];
  /** [from, to) periods in which every connection fails. */
  outages: Array<[number, number]>;
  /** Probability that any one check fails on its own (a flapping server). */
  flakiness: number;
  alertThresholds: number[];
}

export type RenewalPolicy = "on-time" | "late" | "lapses" | "yearly";

/** What one check of a server saw: when, and the serial served (null: the connection failed). */
export interface CheckRecord {
  at: number;
  serial: string | null;
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

  constructor(private readonly random: () => number) {}

  answer(cert: ServedCertificate, now: number): RevocationAnswer | null {
    const asks = this.asks.get(cert.serial) ?? [];
    this.asks.set(cert.serial, asks);
    if (this.random() < this.failureRate) {
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
  /** Every check each server answered, in order: what certkeeper could have known, and when. */
  readonly log = new Map<string, CheckRecord[]>();
  checks = 0;
  failures = 0;

  readonly #leafRevocation = new LeafRevocation(true);

  constructor(
    private readonly clock: Clock,
    private readonly random: () => number,
    /** Revocation as a check asks it: the real checker's cache in front of the simulated responder. */
    private readonly revocation?: { checker: RevocationChecker; responder: SimulatedResponder },
  ) {}

  /**
   * Revokes the certificate `server` serves at `at`; with `replaceAfter`, the operator replaces it that
   * long after (a new serial, valid 90 days), else it keeps being served until its planned renewal.
   */
  revoke(server: SimulatedServer, at: number, replaceAfter: number | null): ServedCertificate {
    const cert = SimulatedInternet.servedAt(server, at);
    cert.revokedAt = at;
    if (replaceAfter !== null) {
      const from = at + replaceAfter;
      const index = server.certificates.indexOf(cert);
      server.certificates.splice(index + 1, 0, { serial: `${cert.serial}-replacement`, from, notBefore: from - HOUR, notAfter: from + 90 * DAY });
    }
    return cert;
  }

  /** A server whose certificates over [start, end) follow `policy`. */
  addServer(domain: string, options: { start: number; end: number; policy: RenewalPolicy; outages: number; flakiness: number; alertThresholds: number[] }): SimulatedServer {
    const r = this.random;
    const certificates: ServedCertificate[] = [];
    const lifetime = options.policy === "yearly" ? 365 * DAY : 90 * DAY;
    // The first certificate was issued somewhere in the lifetime before the start.
    let notBefore = options.start - Math.floor(r() * (lifetime - 2 * DAY));
    let from = options.start - 400 * DAY;
    let serial = 1;
    while (from < options.end) {
      const notAfter = notBefore + lifetime;
      certificates.push({ serial: `${domain}#${serial++}`, from, notBefore, notAfter });
      const renewAt =
        options.policy === "late"
          ? notAfter - Math.floor(r() * 10 * DAY)
          : options.policy === "lapses"
            ? notAfter + Math.floor(r() * 6 * DAY) // the operator notices a few days after expiry
            : notAfter - 30 * DAY - Math.floor(r() * 2 * DAY);
      from = renewAt;
      notBefore = renewAt - HOUR;
    }
    const outages: Array<[number, number]> = [];
    for (let i = 0; i < options.outages; i++) {
      const at = options.start + Math.floor(r() * (options.end - options.start));
      outages.push([at, at + HOUR + Math.floor(r() * 3 * DAY)]);
    }
    const server = { domain, certificates, outages, flakiness: options.flakiness, alertThresholds: options.alertThresholds };
    this.servers.set(domain, server);
    return server;
  }

  /** The certificate `server` serves at `at`. */
  static servedAt(server: SimulatedServer, at: number): ServedCertificate {
    let current = server.certificates[0]!;
    for (const cert of server.certificates) if (cert.from <= at) current = cert;
    return current;
  }

  static down(server: SimulatedServer, at: number): boolean {
    return server.outages.some(([from, to]) => from <= at && at < to);
  }

  async inspect(domain: string, _port?: number, known?: KnownCertificate): Promise<CheckOutcome> {
    this.checks++;
    const server = this.servers.get(domain);
    const now = this.clock.now();
    if (!server) return { ok: false, reason: "dns_error", message: `${domain} does not resolve` };
    const log = this.log.get(domain) ?? [];
    this.log.set(domain, log);
    if (SimulatedInternet.down(server, now) || this.random() < server.flakiness) {
      this.failures++;
      log.push({ at: now, serial: null });
      return { ok: false, reason: "timeout", message: `${domain}:443 did not complete the connection in time` };
    }
    const cert = SimulatedInternet.servedAt(server, now);
    log.push({ at: now, serial: cert.serial });
    const described = details(domain, cert);
    if (this.revocation) {
      const { checker, responder } = this.revocation;
      described.revocation = await this.#leafRevocation.state({
        previous: known?.details.serialNumber === cert.serial ? known.details.revocation : undefined,
        ask: () => checker.answer(`simulated-ca:${cert.serial}`, now, async () => responder.answer(cert, now)),
        now,
      });
    }
    return { ok: true, fingerprint: cert.serial, details: described, problem: null };
  }
}

function details(domain: string, cert: ServedCertificate): CertificateDetails {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    serialNumber: cert.serial,
    notBefore: cert.notBefore,
    notAfter: cert.notAfter,
    issuer: "Simulated CA",
    subject: domain,
    subjectAlternativeNames: [domain],
    signatureAlgorithm: "ecdsa-with-SHA256",
    chain: [{ subject: domain, issuer: "Simulated CA", validFrom: iso(cert.notBefore), validTo: iso(cert.notAfter) }],
  };
}
