/** Checking certificates: retrieval as a source, applying a check, the monitor and the scheduler. */
export { TlsCertificateSource, type CertificateSource, type InspectOptions, type KnownCertificate } from "./certificate_source.ts";
export { applyCheck, type AppliedCheck, type CheckOutcome, type CheckPolicy } from "./check_apply.ts";
export { nextOnPhase } from "./check_phase.ts";
export { Monitor, type CheckObserver, type MonitorOptions } from "./monitor.ts";
export { createScheduler, type Scheduler, type SchedulerOptions } from "./scheduler.ts";
export { crossingAt, nextAlertAt, thresholdToAnnounce } from "./threshold_crossings.ts";
