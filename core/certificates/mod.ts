/** Certificates as the API shows them: domain names, the status rule, the views. */
export { defaultMailDomain, normalizeConnectTo, normalizeDomain } from "./domain_name.ts";
export { presentCertificate, presentChecked, presentCreated } from "./present.ts";
export {
  certificateRenewalState,
  certificateStatus,
  endpointStatus,
  CERTIFICATE_STATUSES,
  DEFAULT_ALERT_THRESHOLDS,
  DEFAULT_EXPIRING_DAYS,
  expiringHorizon,
  statusTimeline,
  TIMELINE_END,
  TIMELINE_START,
  type CertificateStatus,
  type StatusPeriod,
  type StatusInput,
  type StatusReason,
} from "./status.ts";
export { explainAttention, explainCertificate, isRenewalReason, PROBLEM_GROUPS, problemRank, RENEWAL_REASONS, type ExplainedCertificate } from "./explain.ts";
