/**
 * The re-check loop: leases due certificates (their nextCheckAt moves to the lease's end, so a process
 * that dies mid-check leaves them due again) and checks them with bounded concurrency.
 *
 * Before its first look at the store it brings every stored next check forward to at most the last
 * check plus this process's interval: times chosen under a longer CERTKEEPER_CHECK_INTERVAL must not
 * hold a shortened one back until they come.
 */
import { CLOCK_STEP_SLACK_MS, clockStepWatch, type Clock } from "../base/time.ts";
import type { Store } from "../store/ports.ts";
import type { Logger } from "../base/log.ts";
import type { CertificateRecord } from "../base/records.ts";
import { WorkLoop } from "../base/work_loop.ts";
import type { Monitor } from "./monitor.ts";
import { CheckCancelled } from "../tls/endpoint_retrieve.ts";

export interface SchedulerOptions {
  store: Store;
  clock: Clock;
  monitor: Monitor;
  logger: Logger;
  /** Identifies this process in leases. */
  owner: string;
  concurrency: number;
  leaseMs: number;
  pollMs: number;
  /** CERTKEEPER_CHECK_INTERVAL: no certificate waits longer than this after its last check. */
  intervalMs: number;
}

export type Scheduler = WorkLoop<CertificateRecord>;

/**
 * Check results are saved in groups of up to this many, gathered for at most SAVE_WAIT_MS: an unchanged
 * re-check's save is one row of one statement (adapters/sql/recheck_batch.ts), and a statement of a
 * dozen rows costs little more than one of a few (measured: 70 µs a save alone, 34 in fours, 24 in
 * thirty-twos), while the wait holds no slot. 5 ms gathered about 8 at saturation (1,200 checks/s);
 * 20 ms gathers most of a group, and delays what a check found by at most that.
 */
const SAVE_GROUP = 32;
const SAVE_WAIT_MS = 20;
/**
 * Certificates leased ahead of free slots, per slot: a lease (one request to the database, its rows
 * read and written in one transaction) of about 33 instead of about 12 costs the database thread a
 * third less per certificate. They wait in memory for a slot, inside their lease (create_core.ts checkLeaseMs).
 */
const PREFETCH_PER_SLOT = 2;

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { store, owner, leaseMs, monitor, intervalMs, clock } = options;
  // When each certificate in memory was leased: one that waited half its lease for a slot is handed
  // back (due again when the lease runs out) rather than started, so its check starts with half its
  // lease ahead of it.
  const leasedAt = new WeakMap<CertificateRecord, number>();
  // Checks given up while they waited for connections because the loop is stopping: given back at
  // stop() with those never started, so that another process (or this one, restarted) checks them
  // now rather than when their leases run out.
  let givenUp: CertificateRecord[] = [];
  // Once per process, retried on the next round if the store failed to answer.
  let capped: Promise<void> | undefined;
  const capOnce = () =>
    (capped ??= store.certificates.capNextChecks(intervalMs).then(
      (moved) => {
        if (moved > 0) options.logger.info("next checks brought forward to the check interval", { certificates: moved, intervalMs });
      },
      (error) => {
        capped = undefined;
        throw error;
      },
    ));
  // A next check further ahead than this process plans any, after a last check in the future, was
  // planned on a wall clock since set back (a day back would otherwise hold every check back a day,
  // restarts too). Another process's plans under a longer interval have their last check in the past.
  const latestPlanned = Math.max(intervalMs, leaseMs) + CLOCK_STEP_SLACK_MS;
  const pullForward = clockStepWatch(clock, async (now) => {
    const moved = await store.certificates.pullForwardChecks({ now, latest: now + latestPlanned, checkedAfter: now + CLOCK_STEP_SLACK_MS });
    if (moved > 0) options.logger.warn("next checks planned on a clock since set back are due now", { certificates: moved });
  });
  return new WorkLoop<CertificateRecord>(
    {
      claim: async (limit, now) => {
        await capOnce();
        await pullForward();
        const leased = await store.certificates.claimDue({ owner, now, leaseUntil: now + leaseMs, limit });
        for (const record of leased) leasedAt.set(record, now);
        return leased;
      },
      nextDueAt: async () => {
        await capOnce();
        await pullForward();
        return store.certificates.nextDueAt();
      },
      run: async (record, stopping) => {
        if (clock.now() - (leasedAt.get(record) ?? clock.now()) > leaseMs / 2) {
          options.logger.warn("check handed back: it waited half its lease for a slot (overload)", { certificateId: record.id });
          return;
        }
        let outcome;
        try {
          outcome = await monitor.inspect(record, record, { background: true, cancel: stopping });
        } catch (error) {
          // Stopping while it waited for connections: nothing was checked, its lease is given back.
          if (error instanceof CheckCancelled) return void givenUp.push(record);
          throw error;
        }
        // Saved with the checks finishing around it (one statement for the lot), its slot free meanwhile.
        return async () => {
          await monitor.save(record, outcome, false);
        };
      },
      describe: (record) => ({ certificateId: record.id }),
      release: async (dropped) => {
        const records = [...dropped, ...givenUp];
        givenUp = [];
        const leases = records.flatMap((record) => {
          const at = leasedAt.get(record);
          return at === undefined ? [] : [{ id: record.id, nextCheckAt: record.nextCheckAt, leaseUntil: at + leaseMs }];
        });
        await store.certificates.releaseLeases(owner, leases);
      },
    },
    {
      name: "scheduler",
      clock,
      logger: options.logger,
      concurrency: options.concurrency,
      pollMs: options.pollMs,
      prefetch: PREFETCH_PER_SLOT * options.concurrency,
      group: { size: SAVE_GROUP, waitMs: SAVE_WAIT_MS },
    },
  );
}
