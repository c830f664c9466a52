/** Renewal, not age: a leaf's renewal deadline, its renewal state, and how often it is re-checked. */
export {
  checkIntervalFor,
  renewalDeadline,
  renewalRequested,
  renewalState,
  SHORT_LIFETIME,
  type DeadlineClock,
  type RenewalDeadline,
} from "./deadline.ts";
export { caaBlocksRenewal, caaIssuerNames } from "./renewal_blocked.ts";
export { ALERT_POLICIES, RENEWAL_STATES, type AlertPolicy, type RenewalInfo, type RenewalState } from "../base/records.ts";
