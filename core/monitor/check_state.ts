/**
 * The shapes of one check: what a retrieval found, the policy it is judged by, what applying it gives,
 * and the state the steps of applyCheck (check_apply.ts) share while they draft the new record.
 */
import type { CertificateDetails, ChainProblem, NetFailureReason } from "../base/records.ts";
import type { AlertPolicy, CertificateRecord, DnsFindings, EndpointRecord, EventRecord, EventType, TlsConnection } from "../base/records.ts";

/** What a retrieval found. */
export type CheckOutcome =
  | {
      ok: true;
      /** Of every endpoint's chain and failure together: unchanged means nothing changed anywhere. */
      fingerprint: string;
      /** Of the answering endpoint whose leaf expires first. */
      details: CertificateDetails;
      problem: ChainProblem | null;
      tls?: TlsConnection | null;
      endpoints?: EndpointRecord[];
      /** What DNS said (CONTRACT §22); absent: nothing looked up, the findings held stay. */
      dns?: DnsFindings;
      /** The CAA verdict in `dns` came from this check's answers: a verdict kept through a DNS failure raises nothing. */
      caaAnswered?: boolean;
      /** When the servers answered (the check is judged at that moment); absent: when it is saved. */
      at?: number;
    }
  | { ok: false; reason: NetFailureReason; message: string; endpoints?: EndpointRecord[]; at?: number };

/** A retrieval that got an answer. */
export type AnsweredOutcome = Extract<CheckOutcome, { ok: true }>;
/** A retrieval that got none. */
export type FailedOutcome = Extract<CheckOutcome, { ok: false }>;

export interface CheckPolicy {
  /** CERTKEEPER_CHECK_INTERVAL; a short-lived leaf is checked more often (CONTRACT §18). */
  intervalMs: number;
  /** The alert policy of a certificate added without one (CERTKEEPER_ALERT_POLICY). */
  alertPolicy: AlertPolicy;
  /** Consecutive failures before a certificate is declared unreachable (1: at once). */
  failuresBeforeUnreachable: number;
  /** Waits before re-trying after the 1st, 2nd, … failure that is not yet declared. */
  retryDelaysMs: number[];
}

export interface AppliedCheck {
  record: CertificateRecord;
  events: EventRecord[];
}

/** An event to raise, made into an EventRecord once the record is final. */
export interface Draft {
  type: EventType;
  extra?: Record<string, unknown>;
}

/**
 * What the steps of one check share: each reads `previous`, `outcome` and what earlier steps wrote to
 * `next`, writes `next` in place and pushes its events to `drafts` (their order is the events' order).
 */
export interface CheckState<Outcome extends CheckOutcome = CheckOutcome> {
  readonly previous: CertificateRecord;
  readonly next: CertificateRecord;
  readonly drafts: Draft[];
  readonly outcome: Outcome;
  /** The moment the servers answered, at which the check is judged. */
  readonly now: number;
  readonly policy: CheckPolicy;
  /** A certificate being added: no renewal is detected, no revocation was announced before. */
  readonly isNew: boolean;
}

/** Whether the check got an answer (narrows `state.outcome`). */
export function isAnswered(state: CheckState): state is CheckState<AnsweredOutcome> {
  return state.outcome.ok;
}

/** Whether the check got no answer (narrows `state.outcome`). */
export function isFailed(state: CheckState): state is CheckState<FailedOutcome> {
  return !state.outcome.ok;
}
