/**
 * Works imports (CONTRACT §16) in the background. An import is leased to one process at a time (and
 * taken over when that process dies and its lease runs out); its items are judged exactly as
 * POST /v1/certificates judges a body — validation, duplicates, plan limits, retrieval — with at most
 * CERTKEEPER_CHECK_CONCURRENCY retrievals in flight. Retrievals run ahead, but outcomes are written in
 * item order, several per transaction, so plan limits and duplicates fall in item order; each write
 * settles an item and creates its certificate together, so a crash (even kill -9) loses at most the
 * items in flight, which are judged again, and never creates a certificate twice.
 *
 * Imports take turns: one is worked at a time in a process (its items already use every retrieval
 * slot), and after a turn of half a TLS time limit, if another import waits, it is given up between
 * items (those in flight finish) and goes behind the others. One organization's slow import (10,000
 * names that never answer: 104 minutes at the default time limit and concurrency) then holds another's
 * back by one turn, seconds, not to its end; organizations take turns, not imports (the store's claim).
 */
import type { Clock } from "../base/time.ts";
import { latestLiveLease, SECOND } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { ImportRecord } from "../base/records.ts";
import { targetKey, type CertificateTarget, type ImportItemOutcome, type Store } from "../store/ports.ts";
import { asCertkeeperError, errorBody, MAX_BODY_BYTES, payloadTooLarge } from "../base/errors.ts";
import { WorkLoop } from "../base/work_loop.ts";
import type { Monitor } from "../monitor/monitor.ts";
import { duplicate, limitReached, logCertificateAdded, parseAddCertificate, unreachable } from "../certificates/add_rules.ts";
import { firstCheck } from "../monitor/first_check.ts";
import { CheckCancelled } from "../tls/endpoint_retrieve.ts";
import { logEventsRaised } from "../base/journal.ts";

export interface ImportWorkerOptions {
  store: Store;
  clock: Clock;
  logger: Logger;
  monitor: Monitor;
  owner: string;
  /** Retrievals in flight at once (CERTKEEPER_CHECK_CONCURRENCY). */
  concurrency: number;
  /** How long a lease lasts without renewal: a dead process's import waits this long to be taken over. */
  leaseMs: number;
  /** How long an import is worked before it gives its turn to another that waits ({@link importTurnMs}). */
  turnMs: number;
  pollMs: number;
  /** Called when certificates were created (their checks and deliveries are due). */
  onCreated?: () => void;
}

/** Items read from the store at once; outcomes written ahead of the slowest one are held at most this many. */
const PAGE = 500;

export class ImportWorker {
  readonly loop: WorkLoop<ImportRecord>;
  #stopping = false;
  /** Aborted at stop: items still waiting for a connection are given up then (handed back), not started. */
  #cancel = new AbortController();

  constructor(private readonly options: ImportWorkerOptions) {
    const { store, owner, leaseMs, clock } = options;
    this.loop = new WorkLoop<ImportRecord>(
      {
        // A lease ending later than any live holder's was taken on a wall clock since set back, by a
        // process that is gone: it is not waited out.
        claim: (limit, now) => store.imports.claim({ owner, now, leaseUntil: now + leaseMs, limit, latest: latestLiveLease(now, leaseMs) }),
        nextDueAt: () => store.imports.nextClaimAt({ latest: latestLiveLease(clock.now(), leaseMs) }),
        run: (record) => this.#work(record),
        describe: (record) => ({ importId: record.id }),
      },
      // One import at a time per process: its items already use every retrieval slot.
      { name: "imports", clock: options.clock, logger: options.logger, concurrency: 1, pollMs: options.pollMs },
    );
  }

  poke(): void {
    this.loop.poke();
  }

  start(): void {
    this.#stopping = false;
    this.#cancel = new AbortController();
    this.loop.start();
  }

  /**
   * Stops between items: those in flight are judged and written, the rest wait in the store, and the
   * lease is given up so the next process to start (or another running one) goes on at once.
   */
  async stop(): Promise<void> {
    this.#stopping = true;
    this.#cancel.abort();
    await this.loop.stop();
  }

  async #work(record: ImportRecord): Promise<void> {
    const { store, clock, owner, leaseMs, turnMs, logger } = this.options;
    let lost = false;
    // Renewed well before it runs out; a renewal that fails means another process took the import over.
    // The last renewal sent: awaited before the lease is given up, so that it cannot land after.
    let renewing: Promise<unknown> = Promise.resolve();
    const renewal = setInterval(() => {
      renewing = store.imports.renew(record.id, owner, clock.now() + leaseMs).then(
        (held) => (lost ||= !held),
        (error) => logger.warn("could not renew an import's lease", { importId: record.id, error }),
      );
    }, Math.max(100, Math.floor(leaseMs / 3)));
    (renewal as { unref?: () => void }).unref?.();
    // Another import waits when some running import's lease has run out (this one's has not).
    let turnOver = false;
    const turn = setInterval(() => {
      store.imports.nextClaimAt().then(
        (at) => (turnOver ||= at !== null && at <= clock.now()),
        () => {},
      );
    }, turnMs);
    (turn as { unref?: () => void }).unref?.();
    try {
      let afterIndex = -1;
      const interrupted = () => lost || this.#stopping || turnOver;
      while (!interrupted()) {
        const items = await store.imports.pending(record.id, { afterIndex, limit: PAGE });
        if (items.length === 0) break;
        afterIndex = items.at(-1)!.index;
        // Each page judges the organization's limit as it is when the page begins, as a POST then would.
        const org = await store.organizations.get(record.organizationId);
        const page = org ? { ...record, certificateLimit: org.limits.certificates } : record;
        lost = !(await this.#workPage(page, items, interrupted));
      }
      if (lost && !this.#stopping) logger.warn("an import was taken over by another process", { importId: record.id });
    } finally {
      clearInterval(renewal);
      clearInterval(turn);
      await renewing;
      // Given up: claimable at once, behind the imports that waited (a stopping process's by the next to start).
      if (this.#stopping || (turnOver && !lost)) await store.imports.renew(record.id, owner, clock.now()).catch(() => false);
      if (turnOver && !this.#stopping) this.loop.poke();
    }
  }

  /** Judges a page of items, writing outcomes in item order; false when the lease was lost. */
  async #workPage(record: ImportRecord, items: Array<{ index: number; body: string }>, interrupted: () => boolean): Promise<boolean> {
    const { store, clock, owner, concurrency } = this.options;
    const outcomes: Array<ImportItemOutcome | undefined> = new Array(items.length);
    let written = 0;
    let held = true;
    let writing: Promise<void> = Promise.resolve();
    let createdAny = false;
    /** A write that failed (the database refused it): the page stops, and its last write reports it. */
    let failed = false;
    const writeReady = () => {
      writing = writing.then(async () => {
        const batch: ImportItemOutcome[] = [];
        // Events are stamped when saved (written in item order, judged in any): the events list then
        // stays in the order they were raised, by time as by position.
        const at = clock.now();
        while (written < items.length && outcomes[written]) {
          const outcome = outcomes[written++]!;
          batch.push(outcome.kind === "create" ? { ...outcome, events: outcome.events.map((event) => ({ ...event, createdAt: at })) } : outcome);
        }
        if (batch.length === 0 || !held) return;
        const created = await store.imports.settle(record.id, owner, batch, at);
        held = created !== false;
        if (batch.some((o) => o.kind === "create")) createdAny = true;
        if (created && created.length > 0) this.#logCreated(record, batch, new Set(created), at);
      });
      // Handled here, so that a write the workers do not wait for never ends the process as an
      // unhandled rejection; the await after the workers throws it.
      writing.catch(() => (failed = true));
      return writing;
    };
    // A plan already full when the page begins stays full for it: its items fail at once, without a
    // connection, as POST refuses before retrieving. Otherwise the store decides, item by item in order.
    const full = (await store.certificates.count(record)) >= record.certificateLimit;
    // Names already monitored when the page begins are duplicates whatever the items before them do:
    // found in one query, they cost no connection. (Duplicates among the page's own items are found
    // when written, in item order.)
    const taken = await store.certificates.existing(record, items.flatMap((item) => targetOf(item.body) ?? []));
    let next = 0;
    const worker = async () => {
      while (next < items.length && held && !failed && !interrupted()) {
        const i = next++;
        const outcome = await this.#judge(record, items[i]!, { full, taken });
        // Stopping while it waited for a connection: not judged, handed back with the rest.
        if (outcome === null) return;
        outcomes[i] = outcome;
        void writeReady();
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
    await writeReady();
    if (createdAny) this.options.onCreated?.();
    return held;
  }

  /** The log lines of what a write created, as POST writes them: each certificate added, then its events. */
  #logCreated(record: ImportRecord, batch: ImportItemOutcome[], created: Set<string>, now: number): void {
    const { logger } = this.options;
    for (const outcome of batch) {
      if (outcome.kind !== "create" || !created.has(outcome.record.id)) continue;
      logCertificateAdded(logger, outcome.record, now, record.id);
      logEventsRaised(logger, outcome.events);
    }
  }

  /** One item, judged as POST /v1/certificates would judge it as the body. */
  async #judge(
    record: ImportRecord,
    item: { index: number; body: string },
    page: { full: boolean; taken: Set<string> },
  ): Promise<ImportItemOutcome | null> {
    const { clock, monitor, logger } = this.options;
    const failed = (error: unknown): Extract<ImportItemOutcome, { kind: "failed" }> => {
      const known = asCertkeeperError(error);
      if (known.code === "internal_error") logger.error("an import item failed unexpectedly", { importId: record.id, index: item.index, error: known.cause });
      return { index: item.index, kind: "failed", error: errorBody(known).error };
    };
    try {
      // As POST would: a body over its limit is refused before its fields are read.
      if (item.body.length > MAX_BODY_BYTES / 3 && new TextEncoder().encode(item.body).length > MAX_BODY_BYTES) return failed(payloadTooLarge());
      const input = parseAddCertificate(JSON.parse(item.body));
      const scope = { organizationId: record.organizationId, mode: record.mode };
      if (page.taken.has(targetKey(input))) return failed(duplicate(input));
      if (page.full) return failed(limitReached(record.certificateLimit, record.organizationId));
      const outcome = await monitor.inspect(input, undefined, { background: true, cancel: this.#cancel.signal });
      if (!outcome.ok) {
        return {
          ...failed(unreachable(input, outcome.message)),
          unlessBlocked: {
            target: { domain: input.domain, port: input.port, protocol: input.protocol, connectTo: input.connectTo },
            duplicate: errorBody(duplicate(input)).error,
            limitReached: errorBody(limitReached(record.certificateLimit, record.organizationId)).error,
          },
        };
      }
      const { record: certificate, events } = firstCheck(scope, input, outcome, clock.now(), monitor.policy(true));
      return {
        index: item.index,
        kind: "create",
        record: certificate,
        events,
        duplicate: errorBody(duplicate(input)).error,
        limitReached: errorBody(limitReached(record.certificateLimit, record.organizationId)).error,
      };
    } catch (error) {
      if (error instanceof CheckCancelled) return null;
      return failed(error);
    }
  }
}

/** The target an item names (domain, port, protocol, connectTo), when it parses as a valid add body; null otherwise. */
function targetOf(body: string): CertificateTarget | null {
  try {
    const { domain, port, protocol, connectTo } = parseAddCertificate(JSON.parse(body));
    return { domain, port, protocol, connectTo };
  } catch {
    return null;
  }
}

/** An import's lease: long enough to outlast slow retrievals, short enough for a quick takeover. */
export function importLeaseMs(tlsTimeoutMs: number): number {
  return Math.max(5 * SECOND, 3 * tlsTimeoutMs);
}

/** An import's turn: half a TLS time limit (5 s by default), the items in flight then finishing within one. */
export function importTurnMs(tlsTimeoutMs: number): number {
  return Math.max(100, Math.round(tlsTimeoutMs / 2));
}
