/** When a certificate is checked next: the regular re-check, or sooner when something becomes due. */
import { isTrustedChain, type AlertMemory, type CertificateDetails, type CertificateRecord, type SilentLeaf } from "../base/records.ts";
import { DAY } from "../base/time.ts";
import { deploymentCheckAt } from "../deployment/mod.ts";
import { checkIntervalFor, renewalDeadline } from "../renewal/mod.ts";
import { isLeafKeyOf, sameLeaf } from "./alert_memory.ts";
import { regularCheckAt } from "./check_phase.ts";
import type { CheckState } from "./check_state.ts";
import { nextAlertAt } from "./threshold_crossings.ts";

/**
 * Sets `next.nextCheckAt`: the earliest of the regular re-check, what becomes due for the leaves held
 * (the certificate-level one, other nodes' and those served lately), the deployment's grace, and
 * `chainDue` (announceChainAlerts).
 */
export function scheduleNextCheck(state: CheckState, chainDue: number | null): void {
  const { next, now, policy } = state;
  let due = Math.min(leafDue(next, next.details, next.alertedThreshold, next.expiryAlerted, now), otherLeavesDue(state));
  const current = next.details;
  // A leaf served lately, issued after the certificate-level one, that no answering node serves now
  // (a rollout's new leaf, its node back on an older one for a while, or another node's): it is the
  // certificate-level leaf again, or that node's, as soon as the older one goes, and its deadline's
  // check must not wait for the regular one.
  const lately = next.alertMemory.servedLately ?? [];
  const newest = lately.reduce((latest, entry) => Math.max(latest, entry.notBefore), current.notBefore);
  for (const { notBefore, notAfter, deadline } of lately) {
    if (notBefore > current.notBefore && deadline > now) due = Math.min(due, deadline);
    // A leaf served lately and replaced late (the newest leaf issued within a hold of its expiry: a
    // tenth of its lifetime, a day at most, as long as a silent node's leaf is presumed served): a node
    // rolling the new one out may answer the old one again (an endpoint alternating between the two,
    // CONTRACT §20), so it is looked at as it expires, not a regular interval later. A healthy
    // rotation, replaced long before, adds no such check.
    if (notAfter !== undefined && notAfter + 1 > now && notBefore < newest && notAfter - newest <= Math.min(DAY, (notAfter - notBefore) / 10)) {
      due = Math.min(due, notAfter + 1);
    }
  }
  // The end of a pending deployment's grace: the endpoints are looked at then. Once it has passed
  // unjudged (no endpoint answered), the next check on the usual schedule judges it: a dead host is
  // not re-checked at every turn of the scheduler.
  due = Math.min(due, deploymentCheckAt(next.deployment ?? null, now));
  // The regular re-check falls on the certificate's own phase of its interval (check_phase.ts): never
  // later than one interval from now, and spread with the others.
  const regular = regularCheckAt(next.id, now, checkIntervalFor(next.details, policy.intervalMs, now, leafTrusted(next)), next.details.renewalInfo?.nextAt);
  next.nextCheckAt = Math.min(regular, due, chainDue ?? Infinity);
}

/**
 * Other nodes' leaves, served now or earlier: when one of them crosses a threshold it may be the
 * earliest-expiring one by then (its node answering while the current one's does not), so look then.
 * Each is remembered (with what was announced for it), served by a node now or by a silent one at its
 * last answer, or several of these. (A few leaves, at most MEMORY_SIZE and the nodes': found in
 * arrays, cheaper here than sets.) Returns the earliest such moment (Infinity: none).
 */
function otherLeavesDue(state: CheckState): number {
  const { next, now } = state;
  let due = Infinity;
  const current = next.details;
  const others: Array<{ remembered?: AlertMemory["leaves"][number]; served?: CertificateDetails; silent?: SilentLeaf }> = [];
  // (The remembered leaves' keys are unique: {@link remember} replaces an entry with the same key.)
  for (const entry of next.alertMemory.leaves) if (!isLeafKeyOf(entry, current)) others.push({ remembered: entry });
  for (const { details } of next.endpoints) {
    if (!details || sameLeaf(details, current)) continue;
    const other = others.find((o) => (o.served ? sameLeaf(o.served, details) : isLeafKeyOf(o.remembered!, details)));
    if (!other) others.push({ served: details });
    else other.served ??= details;
  }
  for (const leaf of next.alertMemory.silent ?? []) {
    if (isLeafKeyOf(leaf, current)) continue;
    const other = others.find((o) => (o.served ? isLeafKeyOf(leaf, o.served) : o.remembered?.key === leaf.key));
    if (!other) others.push({ silent: leaf });
    else other.silent ??= leaf;
  }
  for (const { remembered, served, silent } of others) {
    const notAfter = remembered?.notAfter ?? served?.notAfter ?? silent!.notAfter;
    const at = nextAlertAt(next.alertThresholds, notAfter, remembered?.alertedThreshold ?? null, remembered?.expiryAlerted ?? false, now);
    if (at !== null) due = Math.min(due, at);
    // Its renewal deadline: the status of the node serving it changes then; and its notBefore when it
    // is served before it (the certificate is invalid until then).
    const deadline = served ? renewalDeadline(served).deadline : silent?.deadline;
    if (deadline !== undefined && deadline > now) due = Math.min(due, deadline);
    if (served && served.notBefore > now) due = Math.min(due, served.notBefore);
    const chain = remembered ? remembered.chainExpiry : (served?.chainExpiry ?? silent?.chainExpiry ?? null);
    if (chain && chain.notAfter < notAfter) {
      const alerted = next.alertMemory.chain.find((entry) => entry.serial === chain.serialNumber)?.alertedThreshold ?? null;
      const chainAt = nextAlertAt(next.alertThresholds, chain.notAfter, alerted, false, now);
      if (chainAt !== null) due = Math.min(due, chainAt);
    }
  }
  return due;
}

/**
 * The next moment something about the leaf `details` becomes due: its renewal deadline, an armed
 * threshold crossing (under the renewal policy, only those after the overdue alert), its expiry, or
 * its notBefore when it is served before it.
 */
function leafDue(record: CertificateRecord, details: CertificateRecord["details"], alerted: number | null, expiryAlerted: boolean, now: number): number {
  const { deadline } = renewalDeadline(details);
  let due = deadline > now ? deadline : Infinity;
  const waitsForDeadline = (record.alertPolicy ?? "days") === "renewal" && !(record.alertMemory.overdue ?? []).includes(details.serialNumber);
  // Under the renewal policy, thresholds crossed before the deadline are covered by the overdue alert.
  const at = nextAlertAt(record.alertThresholds, details.notAfter, alerted, expiryAlerted, waitsForDeadline ? Math.max(now, deadline) : now);
  if (at !== null) due = Math.min(due, at);
  // Expiry is never covered by the deadline: it is due at its moment whatever the deadline says.
  if (!expiryAlerted && details.notAfter + 1 > now) due = Math.min(due, details.notAfter + 1);
  // A leaf served before its notBefore is valid from then on: certificate.recovered is due then.
  if (details.notBefore > now) due = Math.min(due, details.notBefore);
  return due;
}

/**
 * Whether the certificate-level leaf's own chain is trusted (its name may still not match): the
 * certificate's problem may be another node's (endpoints_outcome.ts), which must not slow the checks
 * of a short-lived leaf a trusted CA issued.
 */
function leafTrusted(record: CertificateRecord): boolean {
  const own = record.endpoints?.find((endpoint) => endpoint.details && sameLeaf(endpoint.details, record.details));
  return isTrustedChain(own ? own.problem : record.problem);
}
