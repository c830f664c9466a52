/** Everything operations compose (and the pipeline and faces above them): built once per process by createCore(). */
import type { Config } from "../config/config.ts";
import type { Store } from "../store/ports.ts";
import type { Clock } from "../base/time.ts";
import type { Logger } from "../base/log.ts";
import type { Authenticator } from "../auth/authenticate.ts";
import type { RateLimiter } from "../auth/rate_limit.ts";
import type { Monitor } from "../monitor/monitor.ts";
import type { Scheduler } from "../monitor/scheduler.ts";
import type { Deliverer } from "../notify/deliverer.ts";
import type { Admin } from "../accounts/admin.ts";
import type { ServiceMetrics } from "../metrics/scrape.ts";
import type { EventRetention } from "../notify/retention.ts";
import type { ImportWorker } from "../imports/import_worker.ts";

export interface Services {
  config: Config;
  store: Store;
  clock: Clock;
  logger: Logger;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  monitor: Monitor;
  scheduler: Scheduler;
  /** The delivery worker; absent when the process has no transports (deliveries wait in the outbox). */
  deliveries?: Deliverer;
  /** The Certificate Transparency poller; absent when the process has no CT transport. */
  watches?: { poke(): void };
  admin: Admin;
  /** This process's counters for GET /metrics. */
  metrics: ServiceMetrics;
  /** Deletes events past CERTKEEPER_EVENT_RETENTION. */
  retention: EventRetention;
  /** Works imports in the background. */
  imports?: ImportWorker;
}
