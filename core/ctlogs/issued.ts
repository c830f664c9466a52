/**
 * A log entry matched to watches, as the store records it: one issuance per watch (keyed by the
 * issuance's identity, so the precertificate and the certificate, in however many logs, are one), and
 * CONTRACT §15's `certificate.issued` for it unless the entry was logged before the watch was created.
 */
import { newId } from "../base/ids.ts";
import type { EventRecord } from "../base/records.ts";
import type { CtBatch, CtIssuanceRecord } from "../store/ports.ts";
import { issuedEventData, type Issuance } from "../watches/mod.ts";
import type { Candidate } from "./entry_decode.ts";
import type { IndexedWatch } from "./watch_index.ts";

/** The records of `entry`, matched to `watches`, with their events made at `now`. */
export function matchesOf(entry: Candidate, watches: readonly IndexedWatch[], now: number): CtBatch["matches"] {
  const { fields, issuanceKey, fingerprint } = entry;
  return watches.map((watch) => {
    const issuance: CtIssuanceRecord = {
      watchId: watch.id,
      issuanceKey,
      dnsNames: fields.dnsNames,
      issuerOrganization: fields.issuerOrganization,
      issuerCommonName: fields.issuerCommonName,
      notBefore: fields.notBefore,
      notAfter: fields.notAfter,
      fingerprint,
      loggedAt: entry.timestamp,
    };
    const event: EventRecord | null =
      entry.timestamp >= watch.createdAt
        ? {
            id: newId("evt"),
            organizationId: watch.organizationId,
            mode: watch.mode,
            type: "certificate.issued",
            certificateId: null,
            data: issuedEventData(asIssuance(issuance), watch),
            createdAt: now,
          }
        : null;
    return { issuance, event };
  });
}

/**
 * Keeps one match per watch and issuance from a run's matches (a precertificate and its certificate
 * in the same run): the first, with the certificate's fingerprint when either has it.
 */
export function distinctMatches(matches: CtBatch["matches"]): CtBatch["matches"] {
  const kept = new Map<string, CtBatch["matches"][number]>();
  for (const match of matches) {
    const key = `${match.issuance.watchId} ${match.issuance.issuanceKey}`;
    const first = kept.get(key);
    if (!first) {
      kept.set(key, match);
      continue;
    }
    if (first.issuance.fingerprint === null && match.issuance.fingerprint !== null) {
      const fingerprint = match.issuance.fingerprint;
      first.issuance.fingerprint = fingerprint;
      if (first.event) first.event.data = { ...first.event.data, fingerprintSha256: colonHex(fingerprint) };
    }
  }
  return [...kept.values()];
}

/** A recorded issuance as §15's code reads one (events, autoMonitor): issuer O, else CN. */
export function asIssuance(record: CtIssuanceRecord & { seq?: number }): Issuance {
  const dn = [
    ...(record.issuerOrganization !== null ? [`O=${escape(record.issuerOrganization)}`] : []),
    ...(record.issuerCommonName !== null ? [`CN=${escape(record.issuerCommonName)}`] : []),
  ].join(", ");
  return {
    id: record.seq !== undefined ? String(record.seq) : record.issuanceKey,
    dnsNames: record.dnsNames,
    issuerFriendlyName: record.issuerOrganization ?? record.issuerCommonName,
    issuerName: dn || null,
    notBefore: record.notBefore,
    notAfter: record.notAfter,
    certSha256: record.fingerprint,
    tbsSha256: record.issuanceKey,
  };
}

/**
 * A DN attribute value as RFC 4514 writes it, for nameAttributes() to read back whole: the separators,
 * backslash, quote and the other specials escaped, and spaces at either end.
 */
function escape(value: string): string {
  return value.replace(/[\\,;"+<>=#]/g, (c) => `\\${c}`).replace(/^ | $/g, "\\ ");
}

function colonHex(hex: string): string {
  return hex.toUpperCase().match(/../g)!.join(":");
}
