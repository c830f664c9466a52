/** The certificate as callers see it: SPEC.md 2.2's fields, in its order, as CONTRACT §5 formats them. */
import { iso } from "../base/time.ts";
import type { CertificateRecord, RevocationState } from "../base/records.ts";
import { certificateRenewalState, certificateStatus, ClockAt, endpointStatus } from "./status.ts";
import { renewalDeadline } from "../renewal/mod.ts";
import { defaultMailDomain } from "./domain_name.ts";
import { presentDeployment } from "../deployment/mod.ts";
import { httpHref } from "../net/mod.ts";
import {
  CREATED_FIELDS,
  UNMONITORED_FIELDS,
  type CertificateView,
  type CheckedCertificateView,
  type CreatedCertificateView,
} from "../schemas/certificate.ts";

/** Every field of SPEC.md 2.2 plus statusReason: get, list, patch, check, and event payloads. */
export function presentCertificate(record: CertificateRecord, now: number): CertificateView {
  return present(record, new ClockAt(now));
}

/**
 * {@link presentCertificate}'s view as JSON text. A record that cannot change (a frozen one: what the
 * store's read cache hands out) is rendered once and the text reused for as long as nothing in the view
 * changes with time: its status and every whole-days count stay what they were until the moment the
 * clock noted while rendering (the next threshold, expiry or day boundary of the leaf, its chain and its
 * endpoints). Serving the same text saves a busy server a view and a serialisation per request.
 */
export function certificateJson(record: CertificateRecord, now: number): string {
  // Whole milliseconds only: the clock's horizon is exact for them.
  if (!Number.isInteger(now)) return JSON.stringify(presentCertificate(record, now));
  const hit = renderings.get(record);
  if (hit !== undefined && hit.from <= now && now < hit.until) return hit.json;
  const clock = new ClockAt(now);
  const json = JSON.stringify(present(record, clock));
  if (Object.isFrozen(record)) renderings.set(record, { json, from: now, until: clock.changesAt });
  return json;
}

const renderings = new WeakMap<CertificateRecord, { json: string; from: number; until: number }>();

function present(record: CertificateRecord, clock: ClockAt): CertificateView {
  const { status, statusReason, daysUntilExpiry } = certificateStatus(record, clock);
  const d = record.details;
  return {
    id: record.id,
    domain: record.domain,
    name: record.name,
    status,
    daysUntilExpiry,
    expiresAt: iso(d.notAfter),
    issuedAt: iso(d.notBefore),
    issuer: d.issuer,
    subject: d.subject,
    subjectAlternativeNames: d.subjectAlternativeNames,
    serialNumber: d.serialNumber,
    signatureAlgorithm: d.signatureAlgorithm,
    port: record.port,
    alertThresholds: record.alertThresholds,
    lastCheckedAt: iso(record.lastCheckedAt),
    createdAt: iso(record.createdAt),
    updatedAt: iso(record.updatedAt),
    chain: d.chain.map((entry) => ({
      ...entry,
      // Certificates stored before these fields existed get them at their next check.
      serialNumber: entry.serialNumber ?? "",
      fingerprintSha256: entry.fingerprintSha256 ?? "",
      daysUntilExpiry: clock.daysUntil(validToMs(entry)),
    })),
    statusReason,
    revocation: presentRevocation(d.revocation),
    tags: record.tags,
    mutedUntil: record.mutedUntil === null ? null : iso(record.mutedUntil),
    protocol: record.protocol ?? "tls",
    connectTo: record.connectTo ?? null,
    mailDomain: record.protocol === "smtp" ? (record.mailDomain ?? defaultMailDomain(record.domain)) : null,
    endpoints: (record.endpoints ?? []).map((endpoint) => {
      const judged = endpointStatus(endpoint, record, clock);
      return {
        address: endpoint.address,
        status: judged.status,
        statusReason: judged.statusReason,
        serialNumber: endpoint.details?.serialNumber ?? null,
        fingerprintSha256: endpoint.details?.fingerprintSha256 ?? null,
        expiresAt: endpoint.details ? iso(endpoint.details.notAfter) : null,
        lastCheckedAt: iso(record.lastCheckedAt),
        dane: record.protocol === "smtp" && endpoint.details && endpoint.dane ? { status: endpoint.dane.status, validated: endpoint.dane.validated } : null,
      };
    }),
    chainExpiresAt: d.chainExpiry ? iso(d.chainExpiry.notAfter) : null,
    publicKey: d.publicKey ?? null,
    tls: record.tls ?? null,
    warnings: [...(d.warnings ?? []), ...(isLegacyProtocol(record.tls?.protocol) ? (["legacy_protocol"] as const) : []), ...dnsWarnings(record)],
    alertPolicy: record.alertPolicy ?? "days",
    renewal: presentRenewal(record, clock),
    deployment: presentDeployment(record.deployment ?? null, record.endpoints ?? []),
  };
}

/** CONTRACT §18's `renewal` of the certificate-level leaf. */
function presentRenewal(record: CertificateRecord, clock: ClockAt): CertificateView["renewal"] {
  const { deadline, source, window } = renewalDeadline(record.details);
  const info = record.details.renewalInfo;
  return {
    deadline: iso(deadline),
    source,
    window: window ? { start: iso(window.start), end: iso(window.end) } : null,
    // Read again as a URL: an answer kept before explanation URLs were kept parsed may hold the CA's text.
    explanationUrl: source === "ari" && info?.explanationUrl ? httpHref(info.explanationUrl) : null,
    state: certificateRenewalState(record, clock),
    checkedAt: source === "ari" && info?.checkedAt != null ? iso(info.checkedAt) : null,
  };
}

/** What DNS says about the certificate (CONTRACT §22), as warnings: never a status. */
function dnsWarnings(record: CertificateRecord): CertificateView["warnings"] {
  const warnings: CertificateView["warnings"] = [];
  if (record.dns?.caa?.status === "forbidden") warnings.push("caa_forbids_issuer");
  if (record.protocol === "smtp") {
    if ((record.endpoints ?? []).some((endpoint) => endpoint.details && endpoint.dane?.status === "mismatch")) warnings.push("dane_mismatch");
    if (record.dns?.mtaSts?.mismatch) warnings.push("mta_sts_mismatch");
  }
  return warnings;
}

/**
 * A chain entry's expiry in ms. Parsing its date text was a tenth of a busy server's time; the stored
 * entries live on in the read cache, so each is parsed once.
 */
const validTos = new WeakMap<object, number>();
function validToMs(entry: { validTo: string }): number {
  let ms = validTos.get(entry);
  if (ms === undefined) validTos.set(entry, (ms = Date.parse(entry.validTo)));
  return ms;
}

/** TLS 1.1 or older (CONTRACT §13's `legacy_protocol`). */
export function isLegacyProtocol(protocol: string | undefined): boolean {
  return protocol === "TLSv1" || protocol === "TLSv1.1" || protocol === "SSLv3" || protocol === "SSLv2";
}

/** CONTRACT §14's field; details stored before revocation checks existed read as not_checked. */
export function presentRevocation(state: RevocationState | undefined): CertificateView["revocation"] {
  if (!state) return { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null };
  const time = (ms: number | null) => (ms === null ? null : iso(ms));
  return { status: state.status, source: state.source, checkedAt: time(state.checkedAt), revokedAt: time(state.revokedAt), reason: state.reason };
}

/** The add operation's 13 fields. */
export function presentCreated(record: CertificateRecord, now: number): CreatedCertificateView {
  const full = presentCertificate(record, now);
  return Object.fromEntries(CREATED_FIELDS.map((field) => [field, full[field]])) as CreatedCertificateView;
}

/**
 * The CLI's `check`: the get view of a certificate nobody monitors (no thresholds: expiring within 30
 * days under the `days` policy), judged under `alertPolicy` (default `days`).
 */
export function presentChecked(
  input: Pick<CertificateRecord, "domain" | "port" | "details" | "problem" | "failure" | "lastCheckedAt" | "protocol" | "connectTo" | "endpoints" | "tls"> &
    Partial<Pick<CertificateRecord, "alertPolicy" | "mailDomain" | "dns">>,
  now: number,
): CheckedCertificateView {
  const unmonitored = { alertPolicy: "days", ...input, id: "", name: "", alertThresholds: [], tags: [], mutedUntil: null, createdAt: 0, updatedAt: 0 } as unknown as CertificateRecord;
  const full: Record<string, unknown> = { ...presentCertificate(unmonitored, now) };
  for (const field of UNMONITORED_FIELDS) delete full[field];
  return full as CheckedCertificateView;
}
