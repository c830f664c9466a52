/** The events a check raises: made from its drafts, each carrying the certificate as GET shows it. */
import type { CertificateDetails, CertificateRecord, EventRecord, EventType, RenewalInfo } from "../base/records.ts";
import { newId } from "../base/ids.ts";
import { iso } from "../base/time.ts";
import { presentCertificate } from "../certificates/present.ts";
import { httpHref } from "../net/mod.ts";
import type { Draft } from "./check_state.ts";

export function toEvent(record: CertificateRecord, draft: Draft, now: number): EventRecord {
  return certificateEvent(record, draft.type, now, draft.extra);
}

/**
 * An event about `record`: its data carries the certificate as GET shows it now, and `muted: true`
 * while the certificate is muted (CONTRACT §16; such an event is recorded and delivered nowhere).
 */
export function certificateEvent(record: CertificateRecord, type: EventType, now: number, extra?: Record<string, unknown>): EventRecord {
  const muted = record.mutedUntil !== null && record.mutedUntil > now;
  return {
    id: newId("evt"),
    organizationId: record.organizationId,
    mode: record.mode,
    type,
    certificateId: record.id,
    data: { certificate: presentCertificate(record, now), ...extra, ...(muted ? { muted: true } : {}) },
    createdAt: now,
  };
}

/** The address and leaf an event about another node's leaf names in `data.endpoint`. */
export function endpointNamed(address: string | null, details: CertificateDetails): { address: string | null; serialNumber: string; expiresAt: string } {
  return { address, serialNumber: details.serialNumber, expiresAt: iso(details.notAfter) };
}

export function presentWindow(window: RenewalInfo["window"] | null | undefined): { start: string; end: string } | null {
  return window ? { start: iso(window.start), end: iso(window.end) } : null;
}

/**
 * A request's `data.window` and `data.explanationUrl`: those of the answer that asked (the CA may have
 * answered otherwise since, and the event is about that request), or the last answer's for
 * information kept before the asking answer was noted. The URL is read again as a URL, since an answer
 * kept before explanation URLs were kept parsed may still hold the CA's text until re-asked.
 */
export function requestShown(info: RenewalInfo): { window: ReturnType<typeof presentWindow>; explanationUrl: string | null } {
  const asked = info.requested ?? { window: info.window, explanationUrl: info.explanationUrl };
  return { window: presentWindow(asked.window), explanationUrl: asked.explanationUrl ? httpHref(asked.explanationUrl) : null };
}
