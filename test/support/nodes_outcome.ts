/**
 * One check's outcome over the nodes behind a name, as core/monitor makes it from what each address
 * answered (outcomeOfEndpoints): the certificate-level leaf is the one that expires first. For tests
 * that apply checks to records directly (applyCheck) without servers.
 */
import type { CertificateDetails } from "../../core/base/records.ts";
import { outcomeOfEndpoints } from "../../core/monitor/endpoints_outcome.ts";
import type { CheckOutcome } from "../../core/monitor/mod.ts";

/** `entries`: each address with the leaf it served, or null for one that did not answer (a timeout); `at`: when they answered. */
export function nodesOutcome(entries: Array<[string, CertificateDetails | null]>, at?: number): CheckOutcome {
  const outcome = outcomeOfEndpoints(
    entries.map(([address, leaf]) => ({ address, fingerprint: leaf?.fingerprintSha256 ?? null, details: leaf, problem: null, failure: leaf ? null : "timeout", tls: null })),
  );
  return at === undefined ? outcome : { ...outcome, at };
}
