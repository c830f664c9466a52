/**
 * Delivers the outbox. Events and their pending deliveries are written in the same transaction as the
 * check that raised them; this worker leases due deliveries, makes one attempt each, and records the
 * outcome only while it still holds the lease. A delivery is never lost (it stays pending in the
 * database across restarts) and is marked delivered the moment a receiver accepts it.
 *
 * Fair: at most `perOrganization` attempts of one organization are in flight in this process, and
 * due deliveries are claimed least busy organization first, so one organization's dead endpoints
 * hold a few slots for one attempt timeout each, never everyone's alerts. An attempt's slot is free
 * the moment its answer is in: writing the outcome down (at once, ahead of bulk writes) does not hold
 * it, so the next claim goes out beside that write rather than a round trip after it.
 *
 * Single: the lease outlasts an attempt (timeout and margin), and this process never starts an
 * attempt of a delivery whose earlier attempt it is still waiting for, even when a long pause let
 * the lease run out and the delivery was claimed again.
 */
import type { Clock } from "../base/time.ts";
import { CLOCK_STEP_SLACK_MS, clockStepWatch, SECOND } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { Store, DeliveryJob } from "../store/ports.ts";
import type { ChannelRecord, DeliveryRecord, EventRecord } from "../base/records.ts";
import { newId } from "../base/ids.ts";
import { NetFailure } from "../net/resolver.ts";
import { WorkLoop, type LastStep } from "../base/work_loop.ts";
import { logEventsRaised } from "../base/journal.ts";
import type { Transports } from "./ports.ts";
import { renderNotification } from "./payloads.ts";
import { channelSecrets, scrubSecrets } from "../channels/channel_config.ts";
import { problemsResolvedBy, resolvedBy, triggersOf, type PagerDutyProblem } from "./pagerduty_payload.ts";

export interface DelivererOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  transports: Transports;
  /** Waits between attempts (CERTKEEPER_DELIVERY_RETRY); after the last, a delivery is failed. */
  retryMs: number[];
  mailFrom: string;
  /** CERTKEEPER_PAGERDUTY_URL and CERTKEEPER_TELEGRAM_URL. */
  pagerdutyUrl?: string;
  telegramUrl?: string;
  owner: string;
  concurrency: number;
  /** Most attempts of one organization in flight at once; default `concurrency`. */
  perOrganization?: number;
  /** Cut-off of one attempt. */
  timeoutMs: number;
  pollMs: number;
  onAttempt?: (result: { type: ChannelRecord["type"]; delivered: boolean }) => void;
  /** Jitter source; tests make it deterministic. */
  random?: () => number;
}

/** The outcome of one attempt. */
export interface AttemptResult {
  delivered: boolean;
  responseStatus: number | null;
  error: string | null;
  /** The receiver asked to wait this long (429 Retry-After). */
  retryAfterMs: number | null;
  /** The endpoint is gone for good (410): the channel is disabled. */
  gone: boolean;
}

/**
 * How long a claimed delivery stays leased to one process: its attempt's timeout with a wide margin,
 * so that another process takes it over only when this one died or stalled for that long.
 */
export function deliveryLeaseMs(timeoutMs: number): number {
  return Math.max(2 * 60 * SECOND, timeoutMs * 3);
}

/** The outcome of a PagerDuty trigger or resolve not sent because a later event settled its problem: nothing left to deliver. */
const RESOLVED_SINCE: AttemptResult = { delivered: true, responseStatus: null, error: null, retryAfterMs: null, gone: false };

export class Deliverer {
  readonly loop: WorkLoop<DeliveryJob>;
  /** Attempts in flight in this process, by delivery (`eventId channelId`): their organization. */
  readonly #inFlight = new Map<string, string>();
  /** Deliveries answered whose outcome is being written down: not attempted again meanwhile. */
  readonly #recording = new Set<string>();
  /** The organization of the last delivery claimed: the next claim starts after it (round-robin). */
  #lastOrganization: string | undefined;
  /** Whether the last claim found anything. */
  #foundWork = false;

  constructor(private readonly options: DelivererOptions) {
    const { store, owner } = options;
    const leaseMs = deliveryLeaseMs(options.timeoutMs);
    const perOrganization = options.perOrganization ?? options.concurrency;
    // A next attempt further ahead than this process plans any (the longest wait, jittered, or a
    // lease), after an update in the future, was planned on a wall clock since set back: due now.
    const latestPlanned = Math.max(Math.ceil(Math.max(...options.retryMs, 0) * 1.1), leaseMs) + CLOCK_STEP_SLACK_MS;
    const pullForward = clockStepWatch(options.clock, async (now) => {
      const moved = await store.events.pullForwardDeliveries({ now, latest: now + latestPlanned, updatedAfter: now + CLOCK_STEP_SLACK_MS });
      if (moved > 0) options.logger.warn("delivery attempts planned on a clock since set back are due now", { deliveries: moved });
    });
    this.loop = new WorkLoop<DeliveryJob>(
      {
        claim: async (limit, now) => {
          await pullForward();
          const inFlight: Record<string, number> = {};
          for (const organizationId of this.#inFlight.values()) inFlight[organizationId] = (inFlight[organizationId] ?? 0) + 1;
          const after = this.#lastOrganization;
          const jobs = await store.events.claimDueDeliveries({ owner, now, leaseUntil: now + leaseMs, limit, perOrganization, inFlight, after });
          this.#lastOrganization = jobs.at(-1)?.event.organizationId ?? after;
          this.#foundWork = jobs.length > 0;
          // A delivery claimed again while its attempt here is still waiting (a pause outlasted the lease):
          // the new lease is ours, so that attempt's answer still counts; a second attempt would be a copy.
          return jobs.filter((job) => !this.#inFlight.has(keyOf(job)) && !this.#recording.has(keyOf(job)));
        },
        // After a claim that found work more is likely due: the next claim finds out itself, without a
        // read before it (under a burst of other work each read waits a turn of a busy event loop).
        nextDueAt: async () => {
          if (this.#foundWork) return options.clock.now();
          await pullForward();
          return store.events.nextDeliveryAt();
        },
        run: (job) => this.#deliver(job),
        describe: (job) => ({ eventId: job.event.id, channelId: job.channel.id }),
      },
      {
        name: "deliverer",
        clock: options.clock,
        logger: options.logger,
        concurrency: options.concurrency,
        pollMs: options.pollMs,
        // A claim ranks every organization's due deliveries: worth it for a few slots, not for each one.
        // Attempts last at most a timeout, so a quarter of the slots are free within one.
        minBatch: Math.max(1, Math.floor(options.concurrency / 4)),
      },
    );
  }

  poke(): void {
    this.loop.poke();
  }

  /**
   * Sends a `test` event to `channel` at once, one attempt, no retry; the event is recorded with its
   * single delivery so it is listed like any other.
   */
  async sendTest(channel: ChannelRecord): Promise<{ event: EventRecord; result: AttemptResult }> {
    const now = this.options.clock.now();
    const event: EventRecord = {
      id: newId("evt"),
      organizationId: channel.organizationId,
      mode: channel.mode,
      type: "test",
      certificateId: null,
      data: {
        message: "This is a test notification from certkeeper: this channel works.",
        channel: { id: channel.id, name: channel.name, type: channel.type },
      },
      createdAt: now,
    };
    // Written down before it is sent, as every event is, its delivery leased to this process: a crash
    // after the receiver answered cannot leave it unrecorded, and if this process dies before writing
    // the outcome another one sends it once the lease runs out.
    const { store, owner, clock } = this.options;
    const pending: DeliveryRecord = {
      eventId: event.id,
      channelId: channel.id,
      status: "pending",
      attempts: 0,
      nextAttemptAt: now + deliveryLeaseMs(this.options.timeoutMs),
      lastError: null,
      updatedAt: now,
    };
    await store.events.insert(event, [pending], { leaseOwner: owner });
    logEventsRaised(this.options.logger, [event]);
    const key = `${event.id} ${channel.id}`;
    this.#inFlight.set(key, event.organizationId);
    let result: AttemptResult;
    try {
      result = await this.attempt(event, channel);
    } finally {
      this.#inFlight.delete(key);
    }
    this.#recording.add(key);
    try {
      const at = clock.now();
      if (result.gone) await store.channels.disable(channel.id, at);
      const status = result.delivered ? "delivered" : "failed";
      // The outcome and the channel's health in one write, as a queued delivery's.
      const recorded = await store.events.completeDelivery(owner, { eventId: event.id, channelId: channel.id, status, attempts: 1, nextAttemptAt: at, lastError: result.error, updatedAt: at });
      if (!recorded) this.options.logger.warn("test delivery outcome not recorded: the channel was deleted, or the lease was lost", { eventId: event.id, channelId: channel.id });
      this.#logAttempt(channel, event, { attempt: 1, status, error: result.error });
    } finally {
      this.#recording.delete(key);
    }
    return { event, result };
  }

  /** One attempt to hand `event` to `channel`; never throws. */
  async attempt(event: EventRecord, channel: ChannelRecord, render: { keepOpen?: readonly PagerDutyProblem[] } = {}): Promise<AttemptResult> {
    const { transports, clock, mailFrom, timeoutMs, logger, pagerdutyUrl, telegramUrl } = this.options;
    const result = (partial: Partial<AttemptResult>): AttemptResult => {
      const full = { delivered: false, responseStatus: null, error: null, retryAfterMs: null, gone: false, ...partial };
      this.options.onAttempt?.({ type: channel.type, delivered: full.delivered });
      return full;
    };
    try {
      const rendered = renderNotification(event, channel, { now: clock.now(), mailFrom, pagerdutyUrl, telegramUrl, keepOpen: render.keepOpen });
      if (rendered.kind === "email") {
        await transports.email.send(rendered.message);
        return result({ delivered: true });
      }
      let status = 0;
      // In order, each only once the one before was accepted: one attempt is the whole sequence, and
      // the delivery timeout is the whole sequence's (the lease is sized to it).
      const deadline = performance.now() + timeoutMs;
      for (const request of [rendered.request, ...(rendered.followUps ?? [])]) {
        const left = Math.floor(deadline - performance.now());
        if (left <= 0) return result({ error: `The endpoint did not answer within ${timeoutMs} ms` });
        const response = await transports.http.post(request, { timeoutMs: left });
        status = response.status;
        if (status < 200 || status >= 300) {
          return result({
            responseStatus: status,
            error: `The endpoint answered HTTP ${status}${describeStatus(status)}`,
            retryAfterMs: status === 429 || status === 503 ? response.retryAfterMs : null,
            gone: status === 410,
          });
        }
      }
      return result({ delivered: true, responseStatus: status });
    } catch (error) {
      // A token travels in a Telegram URL, a key in a PagerDuty body: no error text may carry them on.
      const secrets = channelSecrets(channel.type, channel.config);
      const message = scrubSecrets((error as Error).message ?? String(error), secrets);
      if (error instanceof NetFailure) return result({ error: message });
      // Logged with the attempt's outcome (#logAttempt); the stack only at debug.
      logger.debug("notification attempt threw", { eventId: event.id, channelId: channel.id, error: message });
      return result({ error: `Delivery failed: ${message}` });
    }
  }

  /** One attempt; its outcome is handed back as the last step, written down the moment the slot is free. */
  async #deliver(job: DeliveryJob): Promise<LastStep> {
    const key = keyOf(job);
    this.#inFlight.set(key, job.event.organizationId);
    let outcome: AttemptResult;
    try {
      // Only a PagerDuty trigger or resolve asks the store first; every other delivery goes straight to its attempt.
      if (job.channel.type !== "pagerduty") outcome = await this.attempt(job.event, job.channel);
      else if (await this.#resolvedSince(job)) outcome = RESOLVED_SINCE;
      else {
        const keepOpen = await this.#reopenedSince(job);
        const resolves = problemsResolvedBy(job.event.type);
        outcome = resolves.length > 0 && keepOpen.length === resolves.length ? RESOLVED_SINCE : await this.attempt(job.event, job.channel, { keepOpen });
      }
    } finally {
      this.#inFlight.delete(key);
    }
    this.#recording.add(key);
    return async () => {
      try {
        await this.#record(job, outcome);
      } finally {
        this.#recording.delete(key);
      }
    };
  }

  /**
   * A PagerDuty trigger whose problem a later event of its certificate ended (a retry come due after
   * the renewal's resolve went out, or two deliveries claimed together): sent now, it would open an
   * incident nothing resolves any more (PagerDuty keeps the last word on a dedup key). It is not sent.
   */
  async #resolvedSince({ event, channel }: DeliveryJob): Promise<boolean> {
    if (event.certificateId === null) return false;
    const types = resolvedBy(event.type);
    if (types.length === 0) return false;
    const scope = { organizationId: event.organizationId, mode: event.mode };
    const resolved = await this.options.store.events.hasLaterOfCertificate(scope, { afterId: event.id, certificateId: event.certificateId, types });
    if (resolved) this.options.logger.info("PagerDuty trigger not sent: its problem has been resolved since", { eventId: event.id, channelId: channel.id });
    return resolved;
  }

  /**
   * The problems a PagerDuty resolve must leave open: those a later event of its certificate, routed to
   * this channel, opened again (an old renewal's resolve retried after a new problem went out would
   * close the new incident, and that event is raised once: nothing would open it again).
   */
  async #reopenedSince({ event, channel }: DeliveryJob): Promise<PagerDutyProblem[]> {
    if (event.certificateId === null) return [];
    const scope = { organizationId: event.organizationId, mode: event.mode };
    const reopened: PagerDutyProblem[] = [];
    for (const problem of problemsResolvedBy(event.type)) {
      const later = { afterId: event.id, certificateId: event.certificateId, types: triggersOf(problem), channelId: channel.id };
      if (await this.options.store.events.hasLaterOfCertificate(scope, later)) reopened.push(problem);
    }
    if (reopened.length > 0) this.options.logger.info("PagerDuty resolve leaves problems opened since", { eventId: event.id, channelId: channel.id, problems: reopened });
    return reopened;
  }

  /** Writes down an attempt's outcome, and the channel's health with it, while the lease is still ours. */
  async #record({ delivery, event, channel }: DeliveryJob, outcome: AttemptResult): Promise<void> {
    const { store, clock, owner, retryMs, logger } = this.options;
    // A trigger or resolve not sent is no attempt: the delivery ends, its count and the channel's health stay.
    const attempted = outcome !== RESOLVED_SINCE;
    const attempts = attempted ? delivery.attempts + 1 : delivery.attempts;
    const now = clock.now();
    let status: DeliveryRecord["status"] = "delivered";
    let nextAttemptAt = now;
    let lastError = outcome.error;
    if (!outcome.delivered) {
      // A test event left to another process by one that died (CONTRACT §6: a failed test delivery is
      // not retried) gets this one attempt.
      const wait = event.type === "test" ? undefined : retryMs[attempts - 1];
      if (outcome.gone) {
        status = "failed";
        lastError = `${outcome.error}: the endpoint is gone, so the channel was disabled`;
        await store.channels.disable(channel.id, now);
      } else if (wait === undefined) {
        status = "failed";
        lastError = `${outcome.error} (gave up after ${attempts} attempts)`;
      } else {
        status = "pending";
        nextAttemptAt = now + Math.max(this.#jitter(wait), Math.min(outcome.retryAfterMs ?? 0, retryMs.at(-1)!));
      }
    }
    const recorded = await store.events.completeDelivery(
      owner,
      { eventId: event.id, channelId: channel.id, status, attempts, nextAttemptAt, lastError: status === "delivered" ? null : lastError, updatedAt: now },
      { health: attempted },
    );
    // The channel's health was written with the outcome (one transaction): a crash cannot part them.
    if (!recorded) logger.warn("delivery outcome not recorded: the lease was lost", { eventId: event.id, channelId: channel.id });
    else this.#logAttempt(channel, event, { attempt: attempts, status, error: lastError, attemptError: outcome.error });
  }

  /** An attempt that failed, at `warn`; a delivery that ends failed, at `error` besides (see #recordHealth). */
  #logAttempt(
    channel: ChannelRecord,
    event: EventRecord,
    outcome: { attempt: number; status: DeliveryRecord["status"]; error: string | null; attemptError?: string | null },
  ): void {
    if (outcome.status === "delivered") return;
    const fields = { channelId: channel.id, channelType: channel.type, eventId: event.id, eventType: event.type, attempt: outcome.attempt };
    this.options.logger.warn("notification attempt failed", { ...fields, error: outcome.attemptError ?? outcome.error, willRetry: outcome.status === "pending" });
    if (outcome.status === "failed") this.options.logger.error("notification delivery failed", { ...fields, error: outcome.error });
  }

  /** ±10 %: deliveries failing together do not retry together. */
  #jitter(ms: number): number {
    const random = this.options.random ?? Math.random;
    return Math.round(ms * (0.9 + 0.2 * random()));
  }
}

function keyOf({ delivery }: DeliveryJob): string {
  return `${delivery.eventId} ${delivery.channelId}`;
}

function describeStatus(status: number): string {
  if (status >= 300 && status < 400) return " (a redirect: certkeeper does not follow redirects)";
  if (status === 429) return " (rate limited)";
  if (status === 410) return " (gone)";
  return "";
}
