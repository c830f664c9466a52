/**
 * The steps of a check that take in what the servers said: a failure, or an answer's chains and
 * endpoints, then the revocations, deployments, CAA and health it shows. Each writes the shared
 * CheckState (check_state.ts) in place.
 */
import type { CertificateDetails, CertificateRecord, Health } from "../base/records.ts";
import { certificateStatus, isInvalid } from "../certificates/status.ts";
import { judgeDeployment } from "../deployment/mod.ts";
import { caaIssuerNames } from "../renewal/mod.ts";
import { noteServedLately, rememberSilentNodes, RENEWAL_BLOCKED_MEMORY_SIZE, REVOKED_MEMORY_SIZE, sameLeaf } from "./alert_memory.ts";
import { endpointNamed } from "./check_events.ts";
import type { AnsweredOutcome, CheckState, FailedOutcome } from "./check_state.ts";
import { sameEndpoints, sameRenewalInfo, sameRevocation } from "./record_compare.ts";

/**
 * A check that got no answer. Returns false while the failure is not declared yet (the record is then
 * final: a retry is scheduled and nothing announced); true once it is declared unreachable.
 */
export function takeFailure(state: CheckState<FailedOutcome>): boolean {
  const { previous, next, drafts, outcome, now, policy } = state;
  next.failureCount = previous.failureCount + 1;
  if (next.failureCount < policy.failuresBeforeUnreachable) {
    // Not declared yet: one lost packet raises no alert. Try again shortly; announce nothing.
    const delay = policy.retryDelaysMs[next.failureCount - 1] ?? policy.retryDelaysMs.at(-1) ?? policy.intervalMs;
    next.nextCheckAt = now + Math.min(delay, policy.intervalMs);
    return false;
  }
  next.failure = outcome.reason;
  next.health = "unreachable";
  const endpoints = outcome.endpoints ?? [];
  if (!sameEndpoints(previous.endpoints, endpoints)) next.endpoints = endpoints;
  rememberSilentNodes(previous, next, endpoints.length === 0, now);
  if (previous.health !== "unreachable") drafts.push({ type: "certificate.unreachable", extra: { error: outcome.message } });
  return true;
}

/**
 * An answer's chains, endpoints and judgement into `next`, and the nodes silent in it. Returns the
 * leaves the answering nodes serve.
 */
export function takeAnswer(state: CheckState<AnsweredOutcome>): CertificateDetails[] {
  const { previous, next, outcome, now } = state;
  const unchanged =
    outcome.fingerprint === previous.fingerprint &&
    outcome.problem === previous.problem &&
    sameRevocation(outcome.details.revocation, previous.details.revocation) &&
    sameRenewalInfo(outcome.details.renewalInfo, previous.details.renewalInfo);
  const endpoints = outcome.endpoints ?? [];
  next.fingerprint = outcome.fingerprint;
  // Keep the stored objects when nothing changed, so the store can skip rewriting them.
  next.details = unchanged ? previous.details : outcome.details;
  next.endpoints = sameEndpoints(previous.endpoints, endpoints) ? previous.endpoints : endpoints;
  next.tls = outcome.tls ?? null;
  next.problem = outcome.problem;
  next.failure = null;
  next.failureCount = 0;
  rememberSilentNodes(previous, next, false, now);
  // Leaves the answering nodes serve. (A few leaves: an array, cheaper here than a set.)
  const served: CertificateDetails[] = [];
  for (const { details } of endpoints) {
    if (details && !served.some((leaf) => sameLeaf(leaf, details))) served.push(details);
  }
  if (next.endpoints !== previous.endpoints || next.details !== previous.details) noteServedLately(next, served.length > 0 ? served : [next.details]);
  return served;
}

/**
 * Revocation is final: each serial is announced once, when first seen revoked, whichever endpoint
 * serves it (CONTRACT §14); a leaf other than the certificate-level one is named in data.endpoint.
 */
export function announceRevocations(state: CheckState<AnsweredOutcome>): void {
  const { previous, next, drafts, outcome } = state;
  const endpoints = outcome.endpoints ?? [];
  const announcedRevoked = new Set(next.alertMemory.revoked ?? []);
  if (!state.isNew && previous.details.revocation?.status === "revoked") announcedRevoked.add(previous.details.serialNumber);
  const revokedNow: Array<{ details: CertificateDetails; address: string | null }> = [];
  if (outcome.details.revocation?.status === "revoked") revokedNow.push({ details: outcome.details, address: null });
  for (const e of endpoints) if (e.details?.revocation?.status === "revoked") revokedNow.push({ details: e.details, address: e.address });
  const newlyRevoked: string[] = [];
  for (const { details, address } of revokedNow) {
    const serial = details.serialNumber;
    if (announcedRevoked.has(serial)) continue;
    announcedRevoked.add(serial);
    newlyRevoked.push(serial);
    drafts.push(
      serial === outcome.details.serialNumber
        ? { type: "certificate.revoked" }
        : { type: "certificate.revoked", extra: { endpoint: endpointNamed(address, details) } },
    );
  }
  if (newlyRevoked.length > 0) {
    next.alertMemory = { ...next.alertMemory, revoked: [...newlyRevoked, ...(next.alertMemory.revoked ?? [])].slice(0, REVOKED_MEMORY_SIZE) };
  }
}

/** What the answer says of the issuances recorded for these names, and of DNS and its CAA records. */
export function judgeDeploymentAndDns(state: CheckState<AnsweredOutcome>): void {
  const { next, drafts, outcome, now } = state;
  // An issuance recorded for these names (CONTRACT §20): gone once every answering endpoint serves it;
  // announced once when its grace passes while one still serves an older leaf.
  const deployment = judgeDeployment(next.deployment ?? null, next.endpoints, now);
  next.deployment = deployment.deployment;
  for (const extra of deployment.notDeployed) drafts.push({ type: "certificate.not_deployed", extra });
  if (outcome.dns !== undefined) next.dns = outcome.dns;
  else if (next.dns?.caa && !sameCaaIssuer(next.dns.caa, next.details)) {
    // Nothing looked up (CERTKEEPER_DNS_SERVERS=off, no resolver): the findings held stay, but not a
    // CAA verdict drawn for another CA's leaf (as after a failed lookup): it says nothing of this one's.
    const { caa: _, ...held } = next.dns;
    next.dns = held;
  }
  // CAA that will make the next renewal fail (CONTRACT §22): once per serial and record set, and
  // only on answers of this check: DNS failures never raise an event.
  const caa = next.dns?.caa;
  if (outcome.caaAnswered && caa?.status === "forbidden" && caa.blocking) {
    const key = `${next.details.serialNumber}|${caa.blocking.key}`;
    const announced = next.alertMemory.renewalBlocked ?? [];
    if (!announced.includes(key)) {
      const { name, setAt, property, reason, records } = caa.blocking;
      drafts.push({ type: "certificate.renewal_blocked", extra: { caa: { name, setAt, property, reason, records, issuerDomain: caa.issuerDomain } } });
      next.alertMemory = { ...next.alertMemory, renewalBlocked: [key, ...announced].slice(0, RENEWAL_BLOCKED_MEMORY_SIZE) };
    }
  }
}

/** The health the answer gives, and its change: certificate.invalid, or certificate.recovered. */
export function judgeHealth(state: CheckState<AnsweredOutcome>): void {
  const { previous, next, drafts, now } = state;
  const health: Health = isInvalid(next, now) ? "invalid" : "ok";
  next.health = health;
  if (health === "invalid" && previous.health !== "invalid") drafts.push({ type: "certificate.invalid" });
  if (health === "ok" && previous.health !== "ok") {
    const { status } = certificateStatus(next, now);
    if (status === "valid" || status === "expiring") drafts.push({ type: "certificate.recovered" });
  }
}

/** Whether a CAA verdict is about the CA of `leaf` (a verdict that names no CA's issuers is taken as such). */
function sameCaaIssuer(caa: NonNullable<NonNullable<CertificateRecord["dns"]>["caa"]>, leaf: CertificateDetails): boolean {
  const issuers = caa.blocking?.issuers;
  return issuers === undefined || caaIssuerNames(leaf).some((name) => issuers.includes(name.toLowerCase()));
}
