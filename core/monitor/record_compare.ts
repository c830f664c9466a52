/**
 * Comparisons of what a check found with what is stored: whether anything changed, and whether the
 * stored objects can be kept (so that the store can skip rewriting them).
 */
import type { CertificateRecord, DaneVerdict, EndpointRecord, RenewalInfo, RevocationState } from "../base/records.ts";

/** Whether a check changed anything a caller can see besides lastCheckedAt. */
export function changed(a: CertificateRecord, b: CertificateRecord): boolean {
  return (
    a.fingerprint !== b.fingerprint ||
    a.problem !== b.problem ||
    a.failure !== b.failure ||
    a.endpoints !== b.endpoints ||
    a.details.revocation?.status !== b.details.revocation?.status ||
    !sameRenewalInfo(a.details.renewalInfo, b.details.renewalInfo, true) ||
    (a.dns ?? null) !== (b.dns ?? null)
  );
}

/**
 * The same renewal information as far as anyone can see, and (unless `visibleOnly`) due to be asked
 * again at the same moment, so that an unchanged answer still moves the stored time to ask again.
 */
export function sameRenewalInfo(a: RenewalInfo | null | undefined, b: RenewalInfo | null | undefined, visibleOnly = false): boolean {
  if (a === b) return true;
  if (!a || !b) return (a ?? null) === (b ?? null);
  return (
    a.window?.start === b.window?.start &&
    a.window?.end === b.window?.end &&
    a.explanationUrl === b.explanationUrl &&
    a.checkedAt === b.checkedAt &&
    a.requestedEnd === b.requestedEnd &&
    a.requested?.window.end === b.requested?.window.end &&
    a.previousWindow?.end === b.previousWindow?.end &&
    (visibleOnly || (a.lastError === b.lastError && a.nextAt === b.nextAt))
  );
}

/** Same addresses serving the same chains with the same judgement and failures. */
export function sameEndpoints(a: readonly EndpointRecord[], b: readonly EndpointRecord[]): boolean {
  return (
    a.length === b.length &&
    a.every((x, i) => {
      const y = b[i]!;
      return (
        x.address === y.address &&
        x.fingerprint === y.fingerprint &&
        x.problem === y.problem &&
        x.failure === y.failure &&
        sameRevocation(x.details?.revocation, y.details?.revocation) &&
        sameRenewalInfo(x.details?.renewalInfo, y.details?.renewalInfo) &&
        sameDane(x.dane, y.dane)
      );
    })
  );
}

export function sameDane(a: DaneVerdict | null | undefined, b: DaneVerdict | null | undefined): boolean {
  return (a ?? null) === (b ?? null) || (a?.status === b?.status && a?.validated === b?.validated);
}

/** The same revocation answer (the source hands back the stored object when it reused it). */
export function sameRevocation(a: RevocationState | undefined, b: RevocationState | undefined): boolean {
  return a === b || (a?.status === b?.status && a?.checkedAt === b?.checkedAt && a?.validUntil === b?.validUntil);
}
