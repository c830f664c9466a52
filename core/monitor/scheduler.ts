/**
 * The re-check loop: leases due certificates (their nextCheckAt moves to the lease's end, so a process
 * that dies mid-check leaves them due again) and checks them with bounded concurrency.
 */
import type { Clock } from "../base/time.ts";
import type { Store } from "../store/ports.ts";
import type { Logger } from "../base/log.ts";
import type { CertificateRecord } from "../base/records.ts";
import { WorkLoop } from "../base/work_loop.ts";
import type { Monitor } from "./monitor.ts";

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
}

export type Scheduler = WorkLoop<CertificateRecord>;

export function createScheduler(options: SchedulerOptions): Scheduler {
  const { store, owner, leaseMs, monitor } = options;
  return new WorkLoop<CertificateRecord>(
    {
      claim: (limit, now) => store.certificates.claimDue({ owner, now, leaseUntil: now + leaseMs, limit }),
      nextDueAt: () => store.certificates.nextDueAt(),
      run: async (record) => {
        await monitor.check(record, { manual: false });
      },
      describe: (record) => ({ certificateId: record.id }),
    },
    { name: "scheduler", clock: options.clock, logger: options.logger, concurrency: options.concurrency, pollMs: options.pollMs },
  );
}
