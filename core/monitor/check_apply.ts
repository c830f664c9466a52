/**
 * What one check means: the certificate's new state and the events it raises (CONTRACT §7). Pure:
 * the same previous state, outcome and time always give the same result, which is what lets a
 * writer that lost a race simply apply its outcome again to the fresher state.
 *
 * Its steps live beside it, one concern a file: taking in the answer (check_answer.ts), renewals
 * (check_rotation.ts), time-based alerts (check_alerts.ts, check_chain.ts) and the next check
 * (check_schedule.ts). They share one CheckState (check_state.ts) and run in a fixed order: the
 * events are raised in the order they are drafted, and later steps read what earlier ones wrote.
 */
import type { CertificateRecord } from "../base/records.ts";
import { announceLeafAlerts, announceOtherOverdue, announceOtherRequests } from "./check_alerts.ts";
import { announceRevocations, judgeDeploymentAndDns, judgeHealth, takeAnswer, takeFailure } from "./check_answer.ts";
import { announceChainAlerts } from "./check_chain.ts";
import { toEvent } from "./check_events.ts";
import { followRenewals } from "./check_rotation.ts";
import { scheduleNextCheck } from "./check_schedule.ts";
import { isAnswered, isFailed, type AppliedCheck, type CheckOutcome, type CheckPolicy, type CheckState } from "./check_state.ts";
import { changed } from "./record_compare.ts";

export type { AppliedCheck, CheckOutcome, CheckPolicy } from "./check_state.ts";

/**
 * Applies `outcome` to `previous`. For a certificate being added, pass its initial record as
 * `previous` with `isNew`: no renewal is detected, and health starts as "ok", so a certificate added
 * invalid, expired or inside a threshold is announced like any other.
 */
export function applyCheck(
  previous: CertificateRecord,
  outcome: CheckOutcome,
  now: number,
  policy: CheckPolicy,
  options: {
    isNew?: boolean;
    /**
     * When the result is saved, if after `now` (the moment the servers answered, at which the check is
     * judged): the time of its events and of the change. Events are listed in the order they are saved.
     */
    savedAt?: number;
  } = {},
): AppliedCheck {
  const state: CheckState = { previous, next: { ...previous, lastCheckedAt: now }, drafts: [], outcome, now, policy, isNew: options.isNew ?? false };
  const { next, drafts } = state;

  if (isFailed(state)) {
    if (!takeFailure(state)) return { record: next, events: [] };
  } else if (isAnswered(state)) {
    const served = takeAnswer(state);
    followRenewals(state, served);
    announceRevocations(state);
    judgeDeploymentAndDns(state);
    judgeHealth(state);
  }

  // Time-based alerts, on the details we hold (the last retrieved ones when unreachable).
  announceLeafAlerts(state);
  announceOtherRequests(state);
  announceOtherOverdue(state);
  const chainDue = announceChainAlerts(state);

  scheduleNextCheck(state, chainDue);
  const savedAt = Math.max(now, options.savedAt ?? now);
  if (drafts.length > 0 || changed(previous, next)) next.updatedAt = savedAt;
  return { record: next, events: drafts.map((draft) => ({ ...toEvent(next, draft, now), createdAt: savedAt })) };
}
