/** Notes the issuances a watch recorded as pending deployments of its scope's certificates (CONTRACT §20). */
import type { PendingDeployment, Scope } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import { namesKey } from "./pending.ts";

/** An issuance as a watch records it, whatever its source (a CT search service, or the logs themselves). */
export interface RecordedIssuance {
  dnsNames: readonly string[];
  notBefore: number;
  notAfter: number;
  /** Of the final certificate, upper-case colon hex; null for a precertificate alone. */
  fingerprintSha256: string | null;
  issuer: string;
}

/**
 * Every certificate of `scope` whose served leaf has exactly these DNS names and an earlier notBefore
 * gets the issuance as its pending deployment (a later issuance replaces an earlier one, keeping the
 * earliest not yet announced), seen at `now`, and is checked when its grace ends. Noting an issuance twice changes nothing. Returns how many
 * certificates it touched.
 */
export async function noteIssuances(store: Store, scope: Scope, issuances: readonly RecordedIssuance[], now: number): Promise<number> {
  let touched = 0;
  for (const issuance of issuances) {
    const key = namesKey(issuance.dnsNames);
    if (key === "") continue;
    const deployment: PendingDeployment = {
      issuedAt: issuance.notBefore,
      notAfter: issuance.notAfter,
      fingerprintSha256: issuance.fingerprintSha256,
      issuer: issuance.issuer,
      seenAt: now,
      announced: false,
    };
    touched += await store.certificates.noteIssuance(scope, { namesKey: key, deployment });
  }
  return touched;
}
