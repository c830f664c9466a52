/**
 * Runs checks and saves their results. A result is saved only over the state it was computed from
 * (compare-and-swap on the record's version); a writer that loses the race re-applies its outcome to
 * the fresher state, so a manual check and a scheduled one never announce the same change twice.
 */
import type { Clock } from "../base/time.ts";
import { MINUTE, SECOND } from "../base/time.ts";
import type { AlertPolicy, CertificateRecord } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import type { Logger } from "../base/log.ts";
import { logEventsRaised } from "../base/journal.ts";
import { logStatusChange } from "../certificates/status_change_log.ts";
import { applyCheck, type AppliedCheck, type CheckOutcome, type CheckPolicy } from "./check_apply.ts";
import type { CertificateSource, CheckTarget } from "./certificate_source.ts";
import type { ConnectionBudget } from "../net/connection_budget.ts";

/** How many times a lost race is retried before giving up (each retry re-reads the record). */
const MAX_SAVE_ATTEMPTS = 5;

export interface CheckObserver {
  (result: { ok: boolean; seconds: number }): void;
}

export interface MonitorOptions {
  store: Store;
  clock: Clock;
  source: CertificateSource;
  logger: Logger;
  intervalMs: number;
  /** The alert policy of certificates added without one (CERTKEEPER_ALERT_POLICY); default `renewal`. */
  alertPolicy?: AlertPolicy;
  onCheck?: CheckObserver;
  /**
   * Connections background checks (the scheduler's, an import's) may have open at once; checks asked
   * for through the API do not wait for it.
   */
  connections?: ConnectionBudget;
  /**
   * Connections checks asked for through the API (an add, "check now") may have open at once, beside
   * the background's. Without a bound, 200 adds at once opened 200 connections together: their
   * handshakes and new chains held the event loop in turns of hundreds of milliseconds, every request
   * and delivery behind them (and Bun's TLS client starves handshakes beyond a few dozen in flight).
   * Organizations waiting for it take turns: one organization's slow checks (a name behind many
   * addresses that never answer) hold another's add back by one of them at most.
   */
  requestedConnections?: ConnectionBudget;
  /** Called after a saved check raised events (their deliveries are due now). */
  onEvents?: () => void;
}

export class Monitor {
  constructor(private readonly options: MonitorOptions) {}

  /** Scheduled checks retry a failure twice, shortly, before declaring a certificate unreachable. */
  policy(manual: boolean): CheckPolicy {
    return {
      intervalMs: this.options.intervalMs,
      alertPolicy: this.options.alertPolicy ?? "renewal",
      failuresBeforeUnreachable: manual ? 1 : 3,
      retryDelaysMs: [15 * SECOND, 1 * MINUTE],
    };
  }

  /**
   * Retrieves a certificate, timing it for the metrics; a `background` check waits for the background
   * checks' connection budget, another for the requested checks' budget, in `organizationId`'s turn.
   */
  async inspect(
    target: CheckTarget,
    known?: CertificateRecord,
    options: { background?: boolean; cancel?: AbortSignal; organizationId?: string } = {},
  ): Promise<CheckOutcome> {
    const started = performance.now();
    const { connections, requestedConnections } = this.options;
    const outcome = await this.options.source.inspect(
      target,
      known,
      options.background
        ? { connections, cancel: options.cancel }
        : { connections: options.organizationId === undefined ? requestedConnections : requestedConnections?.for(options.organizationId) },
    );
    this.options.onCheck?.({ ok: outcome.ok, seconds: (performance.now() - started) / 1000 });
    return outcome;
  }

  /**
   * Checks `record` now and saves the result with the events it raised. Null when the certificate
   * was deleted meanwhile.
   */
  async check(record: CertificateRecord, options: { manual: boolean }): Promise<AppliedCheck | null> {
    // Asked for through the API: it does not wait for the background checks' connections.
    const outcome = await this.inspect(record, record, { organizationId: record.organizationId });
    return this.save(record, outcome, options.manual);
  }

  async save(record: CertificateRecord, outcome: CheckOutcome, manual: boolean): Promise<AppliedCheck | null> {
    const { store, clock, logger } = this.options;
    // Judged at the moment the servers answered: a check that saw the old certificate a second before
    // its renewal deadline, saved after it, is not overdue (the next check sees what is served then).
    const answeredAt = Math.min(outcome.at ?? clock.now(), clock.now());
    let current: CertificateRecord | null = record;
    for (let attempt = 1; current && attempt <= MAX_SAVE_ATTEMPTS; attempt++) {
      // A later check was saved meanwhile (another process, or "check now"): it holds what is served
      // now, and this older answer must not put back a certificate already replaced. (Only once a save
      // found the record changed: the record this check started from is never a later check, whatever
      // a step of the system clock says.)
      if (attempt > 1 && current.lastCheckedAt !== null && current.lastCheckedAt > answeredAt) return { record: current, events: [] };
      const applied = applyCheck(current, outcome, answeredAt, this.policy(manual), { savedAt: clock.now() });
      // The source hands back the stored details object when it reused its judgement of the chain.
      const detailsChanged =
        applied.record.fingerprint !== current.fingerprint ||
        applied.record.details !== current.details ||
        applied.record.problem !== current.problem ||
        applied.record.endpoints !== current.endpoints ||
        applied.record.alertMemory !== current.alertMemory ||
        applied.record.deployment !== current.deployment ||
        (applied.record.dns ?? null) !== (current.dns ?? null) ||
        applied.record.tls?.protocol !== current.tls?.protocol ||
        applied.record.tls?.cipher !== current.tls?.cipher;
      if (await store.certificates.saveCheck(applied.record, applied.events, { detailsChanged })) {
        logStatusChange(logger, current, applied.record);
        logEventsRaised(logger, applied.events);
        if (applied.events.length > 0) this.options.onEvents?.();
        return { record: { ...applied.record, version: applied.record.version + 1 }, events: applied.events };
      }
      current = await store.certificates.get(record, record.id);
    }
    if (current) logger.warn("check result not saved: the certificate kept changing", { certificateId: record.id });
    return null;
  }
}
