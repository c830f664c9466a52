/** POST /v1/certificates: validate, check nothing blocks it, retrieve the certificate, store, answer. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { normalizeDomain } from "../certificates/domain_name.ts";
import { rejectUnknownFields, validate } from "../schemas/validate.ts";
import { AddCertificateBody, CreatedCertificate } from "../schemas/certificate.ts";
import { Envelope } from "../schemas/common.ts";
import { DEFAULT_ALERT_THRESHOLDS } from "../certificates/status.ts";
import { presentCreated } from "../certificates/present.ts";
import { applyCheck } from "../monitor/check_apply.ts";
import type { CertificateRecord, Scope } from "../base/records.ts";
import { defineOperation, NoQuery } from "./operation.ts";

export interface AddCertificateInput {
  domain: string;
  port: number;
  name: string;
  alertThresholds: number[];
}

/** Field checks in CONTRACT's order: unknown fields, then the domain, then the rest. */
export function parseAddCertificate(raw: unknown): AddCertificateInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CertkeeperError("invalid_request", "The request body must be a JSON object such as {\"domain\": \"example.com\"}.");
  }
  rejectUnknownFields(AddCertificateBody, raw as Record<string, unknown>);
  const domain = normalizeDomain((raw as { domain?: unknown }).domain);
  const body = validate(AddCertificateBody, raw);
  return {
    domain,
    port: body.port ?? 443,
    name: body.name ?? domain,
    alertThresholds: sortThresholds(body.alertThresholds ?? DEFAULT_ALERT_THRESHOLDS),
  };
}

export function sortThresholds(thresholds: number[]): number[] {
  return [...thresholds].sort((a, b) => b - a);
}

export const addCertificate = defineOperation({
  id: "addCertificate",
  embed: "certificates.add",
  method: "POST",
  path: "/v1/certificates",
  tag: "Certificates",
  summary: "Add a certificate to monitor",
  description:
    "Retrieves the certificate from the domain at once and starts monitoring it. Nothing is stored when no " +
    "certificate can be retrieved (422 certificate_not_found).",
  access: "write",
  query: NoQuery,
  body: AddCertificateBody,
  parseBody: parseAddCertificate,
  status: 201,
  response: Envelope(CreatedCertificate),
  errors: [
    "permission_denied",
    "payload_too_large",
    "unsupported_media_type",
    "invalid_domain",
    "duplicate_domain",
    "certificate_limit_reached",
    "certificate_unreachable",
  ],
  example: { request: { domain: "example.com", name: "Main site", port: 443, alertThresholds: [30, 14, 7] } },
  async handle({ principal, services }, { body }) {
    const input = body as AddCertificateInput;
    const { store, clock, monitor, scheduler } = services;
    const scope = principal.scope;
    const limit = principal.limits.certificates;

    // Cheap refusals first, so a duplicate or a full plan costs no TLS connection.
    if (await store.certificates.findByDomain(scope, input.domain, input.port)) throw duplicate(input);
    if ((await store.certificates.count(scope)) >= limit) throw limitReached(limit);

    const outcome = await monitor.inspect(input.domain, input.port);
    if (!outcome.ok) {
      throw new CertkeeperError(
        "certificate_unreachable",
        `No TLS certificate could be retrieved from ${quote(`${input.domain}:${input.port}`)}: ${outcome.message}. Nothing was stored.`,
      );
    }
    const now = clock.now();
    const initial = initialRecord(scope, input, outcome, now);
    const { record, events } = applyCheck(initial, outcome, now, monitor.policy(true), { isNew: true });
    const result = await store.certificates.insert(record, { limit, events });
    if (result === "duplicate") throw duplicate(input);
    if (result === "limit_reached") throw limitReached(limit);
    scheduler.poke();
    if (events.length > 0) services.deliveries?.poke();
    return { data: presentCreated(record, now) };
  },
});

function initialRecord(
  scope: Scope,
  input: AddCertificateInput,
  outcome: Extract<Parameters<typeof applyCheck>[1], { ok: true }>,
  now: number,
): CertificateRecord {
  return {
    ...scope,
    id: newId("cert"),
    domain: input.domain,
    port: input.port,
    name: input.name,
    alertThresholds: input.alertThresholds,
    createdAt: now,
    updatedAt: now,
    fingerprint: outcome.fingerprint,
    details: outcome.details,
    problem: outcome.problem,
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

function duplicate(input: AddCertificateInput): CertkeeperError {
  return new CertkeeperError(
    "duplicate_domain",
    `${quote(`${input.domain}:${input.port}`)} is already monitored: get it with GET /v1/certificates?domain=${input.domain}.`,
  );
}

function limitReached(limit: number): CertkeeperError {
  return new CertkeeperError(
    "certificate_limit_reached",
    `Your plan allows ${limit} certificates and all are in use: delete one or upgrade the plan.`,
  );
}
