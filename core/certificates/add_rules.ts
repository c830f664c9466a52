/**
 * What adding a certificate means, shared by POST /v1/certificates and the import worker: the body's
 * rules in CONTRACT's order and the refusals' errors (the new record after its first check is
 * monitor/first_check.ts).
 */
import { CertkeeperError, quote } from "../base/errors.ts";
import { normalizeConnectTo, normalizeDomain, normalizeMailDomain } from "./domain_name.ts";
import { DEFAULT_PORTS } from "../starttls/mod.ts";
import { rejectUnknownFields, validate } from "../schemas/validate.ts";
import { AddCertificateBody } from "../schemas/certificate.ts";
import { DEFAULT_ALERT_THRESHOLDS } from "./status.ts";
import { sortTags } from "../schemas/tags.ts";
import type { AlertPolicy, CertificateRecord, Protocol } from "../base/records.ts";
import type { Logger } from "../base/log.ts";
import { certificateStatus } from "./status.ts";

export interface AddCertificateInput {
  domain: string;
  port: number;
  protocol: Protocol;
  connectTo: string | null;
  name: string;
  alertThresholds: number[];
  tags: string[];
  /** Absent: the server's default (CERTKEEPER_ALERT_POLICY). */
  alertPolicy?: AlertPolicy;
  /** `smtp` only (CONTRACT §22); null: the default, the domain minus its first label. */
  mailDomain: string | null;
}

/** Field checks in CONTRACT's order: unknown fields, then the domain, then the rest. */
export function parseAddCertificate(raw: unknown): AddCertificateInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CertkeeperError("invalid_request", "The request body must be a JSON object such as {\"domain\": \"example.com\"}.");
  }
  rejectUnknownFields(AddCertificateBody, raw as Record<string, unknown>);
  const domain = normalizeDomain((raw as { domain?: unknown }).domain);
  const body = validate(AddCertificateBody, raw);
  const protocol = body.protocol ?? "tls";
  const mailDomain = normalizeMailDomain(body.mailDomain);
  if (mailDomain !== null && protocol !== "smtp") throw mailDomainNotSmtp(protocol);
  return {
    domain,
    port: body.port ?? DEFAULT_PORTS[protocol],
    protocol,
    connectTo: normalizeConnectTo(body.connectTo),
    name: body.name ?? domain,
    alertThresholds: sortThresholds(body.alertThresholds ?? DEFAULT_ALERT_THRESHOLDS),
    tags: sortTags(body.tags ?? []),
    ...(body.alertPolicy ? { alertPolicy: body.alertPolicy } : {}),
    mailDomain,
  };
}

/** `mailDomain` names the MTA-STS policy of a mail server: it means nothing for another protocol. */
export function mailDomainNotSmtp(protocol: Protocol): CertkeeperError {
  return new CertkeeperError(
    "invalid_request",
    `Field "mailDomain" applies to smtp certificates only (MTA-STS); this one speaks ${quote(protocol)}: leave it out or null.`,
  );
}

export function sortThresholds(thresholds: number[]): number[] {
  return [...thresholds].sort((a, b) => b - a);
}

/** `domain:port`, with the protocol and the address connected to when they are not the defaults. */
function target(input: AddCertificateInput): string {
  return `${input.domain}:${input.port}${input.protocol === "tls" ? "" : ` (${input.protocol})`}${input.connectTo ? ` via ${input.connectTo}` : ""}`;
}

export function unreachable(input: AddCertificateInput, why: string): CertkeeperError {
  return new CertkeeperError("certificate_unreachable", `No TLS certificate could be retrieved from ${quote(target(input))}: ${why}. Nothing was stored.`);
}

export function duplicate(input: AddCertificateInput): CertkeeperError {
  return new CertkeeperError(
    "duplicate_domain",
    `${quote(target(input))} is already monitored: get it with GET /v1/certificates?domain=${input.domain}.`,
  );
}

export function limitReached(limit: number, organizationId: string): CertkeeperError {
  return new CertkeeperError("certificate_limit_reached", limitMessage({ limit, what: "certificates", flag: "certificate-limit", organizationId }));
}

/**
 * Every `*_limit_reached` message: the limit, and both ways out, a removal or a higher limit, which
 * the operator of a self-hosted certkeeper sets with `org update` (CONTRACT §23).
 */
export function limitMessage(options: { limit: number; what: string; flag: string; organizationId: string }): string {
  const { limit, what, flag, organizationId } = options;
  return (
    `Your organization allows ${limit} ${what} and all are in use: delete one, or have the operator raise the limit ` +
    `with: npm run certkeeper -- org update --id ${organizationId} --${flag} N`
  ) + ".";
}

/** The log line of a certificate added, by POST or by an import (`importId`), the same either way. */
export function logCertificateAdded(logger: Logger, record: CertificateRecord, now: number, importId?: string): void {
  logger.info("certificate added", {
    certificateId: record.id,
    domain: record.domain,
    port: record.port,
    status: certificateStatus(record, now).status,
    organizationId: record.organizationId,
    mode: record.mode,
    ...(importId ? { importId } : {}),
  });
}
