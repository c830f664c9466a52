/** The chain alerts of a check: certificate.chain_expiring for a certificate above a leaf that expires before it. */
import type { ChainCertificate } from "../base/records.ts";
import { iso } from "../base/time.ts";
import { remember, sameLeaf } from "./alert_memory.ts";
import { endpointNamed } from "./check_events.ts";
import type { CheckState } from "./check_state.ts";
import { nextAlertAt, thresholdToAnnounce } from "./threshold_crossings.ts";

/**
 * A certificate above a leaf that expires before it (CONTRACT §13): its thresholds, once per serial.
 * The certificate-level leaf's chain first, then every other leaf an endpoint serves now: a node
 * renewed under a short-lived intermediate makes the status `expiring` (chain_expiring), so it is
 * announced too (named in data.endpoint), not only once the intermediate has expired. Returns when
 * a chain judged here is next due (null: none).
 */
export function announceChainAlerts(state: CheckState): number | null {
  const { next, drafts, outcome, now } = state;
  const { notAfter } = next.details;
  let chainDue: number | null = null;
  const chains: Array<{ above: ChainCertificate; leafNotAfter: number; endpoint?: Record<string, unknown> }> = [];
  if (next.details.chainExpiry) chains.push({ above: next.details.chainExpiry, leafNotAfter: notAfter });
  if (outcome.ok) {
    for (const { address, details } of next.endpoints) {
      if (!details?.chainExpiry || sameLeaf(details, next.details)) continue;
      const endpoint = endpointNamed(address, details);
      chains.push({ above: details.chainExpiry, leafNotAfter: details.notAfter, endpoint });
    }
  }
  const judgedChains = new Set<string>();
  for (const { above, leafNotAfter, endpoint } of chains) {
    if (judgedChains.has(above.serialNumber) || !(above.notAfter < leafNotAfter && now <= above.notAfter)) continue;
    judgedChains.add(above.serialNumber);
    const alerted = next.alertMemory.chain.find((entry) => entry.serial === above.serialNumber)?.alertedThreshold ?? null;
    const threshold = thresholdToAnnounce(next.alertThresholds, above.notAfter, alerted, now);
    if (threshold !== null) {
      drafts.push({
        type: "certificate.chain_expiring",
        extra: {
          threshold,
          chainCertificate: { subject: above.subject, issuer: above.issuer, serialNumber: above.serialNumber, expiresAt: iso(above.notAfter) },
          ...(endpoint ? { endpoint } : {}),
        },
      });
      next.alertMemory = {
        ...next.alertMemory,
        chain: remember(next.alertMemory.chain, { serial: above.serialNumber, alertedThreshold: threshold }, (e) => e.serial),
      };
    }
    // Its thresholds, and the moment it expires (the chain is judged again then).
    const at = nextAlertAt(next.alertThresholds, above.notAfter, threshold ?? alerted, false, now);
    if (at !== null) chainDue = Math.min(chainDue ?? Infinity, at);
  }
  return chainDue;
}
