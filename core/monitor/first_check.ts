/**
 * A new certificate as its first check leaves it, shared by POST /v1/certificates and the import
 * worker: the record the add's input describes, with the check applied as to any certificate.
 */
import { newId } from "../base/ids.ts";
import type { AlertPolicy, CertificateRecord, Scope } from "../base/records.ts";
import type { AddCertificateInput } from "../certificates/add_rules.ts";
import { EMPTY_ALERT_MEMORY } from "./alert_memory.ts";
import { applyCheck, type AppliedCheck, type CheckOutcome, type CheckPolicy } from "./check_apply.ts";

/** A new certificate as its first check leaves it, with the events that check raised. */
export function firstCheck(
  scope: Scope,
  input: AddCertificateInput,
  outcome: Extract<CheckOutcome, { ok: true }>,
  now: number,
  policy: CheckPolicy,
): AppliedCheck {
  return applyCheck(initialRecord(scope, { alertPolicy: policy.alertPolicy, ...input }, outcome, now), outcome, now, policy, { isNew: true });
}

function initialRecord(
  scope: Scope,
  input: AddCertificateInput & { alertPolicy: AlertPolicy },
  outcome: Extract<CheckOutcome, { ok: true }>,
  now: number,
): CertificateRecord {
  return {
    ...scope,
    id: newId("cert"),
    domain: input.domain,
    port: input.port,
    protocol: input.protocol,
    connectTo: input.connectTo,
    mailDomain: input.mailDomain,
    name: input.name,
    alertThresholds: input.alertThresholds,
    alertPolicy: input.alertPolicy,
    tags: input.tags,
    mutedUntil: null,
    createdAt: now,
    updatedAt: now,
    fingerprint: outcome.fingerprint,
    details: outcome.details,
    problem: outcome.problem,
    tls: outcome.tls ?? null,
    endpoints: outcome.endpoints ?? [],
    alertMemory: EMPTY_ALERT_MEMORY,
    deployment: null,
    lastCheckedAt: now,
    failure: null,
    failureCount: 0,
    alertedThreshold: null,
    expiryAlerted: false,
    health: "ok",
    nextCheckAt: now,
    version: 0,
  };
}
