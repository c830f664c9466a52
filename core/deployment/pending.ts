/**
 * Issued but not deployed (CONTRACT §20): an issuance a watch recorded for exactly the DNS names of a
 * certificate's served leaf, with a later notBefore, is pending until every answering endpoint serves
 * it (or a later leaf). Once a grace has passed from when it was recorded (24 hours, or a tenth of the
 * new certificate's lifetime when shorter) while an endpoint still serves an older leaf, it is announced
 * once: `certificate.not_deployed`, naming the lagging addresses. The status does not change.
 */
import { HOUR, iso } from "../base/time.ts";
import type { CertificateDetails, CertificateRecord, EndpointRecord, PendingDeployment } from "../base/records.ts";

const MAX_GRACE = 24 * HOUR;

/** How long after it was recorded an issuance may take to reach every endpoint. */
export function deploymentGrace(deployment: Pick<PendingDeployment, "issuedAt" | "notAfter">): number {
  return Math.min(MAX_GRACE, Math.max(0, Math.floor((deployment.notAfter - deployment.issuedAt) / 10)));
}

/** When the grace of a pending deployment ends. */
export function deploymentDueAt(deployment: Pick<PendingDeployment, "seenAt" | "issuedAt" | "notAfter">): number {
  return deployment.seenAt + deploymentGrace(deployment);
}

/**
 * When the endpoints must next be looked at for a pending deployment: the earliest end, later than
 * `after`, of a grace not yet announced (its own, or that of the issuance it replaced); Infinity when
 * none is left. (A grace that ended during an outage is judged by the next check that answers; the
 * other's end, still to come, keeps its own check.)
 */
export function deploymentCheckAt(deployment: PendingDeployment | null, after = -Infinity): number {
  if (!deployment) return Infinity;
  const own = deployment.announced ? Infinity : deploymentDueAt(deployment);
  const replaced = deployment.superseded ? deploymentDueAt(deployment.superseded) : Infinity;
  return Math.min(own > after ? own : Infinity, replaced > after ? replaced : Infinity);
}

/**
 * The pending deployment once a later issuance replaces `current` (which awaitsIssuance allowed): the
 * later one, keeping the earliest issuance not yet announced, so that an endpoint that lags behind it
 * is still announced when that issuance's grace ends (a later issuance recorded during an outage, or
 * soon after the first, would otherwise put the announcement off by a whole grace).
 */
export function supersedeDeployment(current: PendingDeployment | null, later: PendingDeployment): PendingDeployment {
  const { superseded: _ignored, ...incoming } = later;
  let earliest: Omit<PendingDeployment, "superseded"> | null = current?.superseded ?? null;
  if (!earliest && current && !current.announced) {
    const { superseded: _none, ...own } = current;
    earliest = own;
  }
  return earliest ? { ...incoming, superseded: earliest } : incoming;
}

/**
 * The key two sets of DNS names share exactly when they are equal: lower-cased, a trailing dot
 * removed, deduplicated, sorted, joined by commas (which no DNS name holds). IP addresses are not DNS
 * names and are left out.
 *
 * @example
 * namesKey(["WWW.example.com", "example.com."]) === "example.com,www.example.com";
 */
export function namesKey(names: readonly string[]): string {
  const dns = names.filter((name) => !/^[0-9.]+$/.test(name) && !name.includes(":")).map((name) => name.toLowerCase().replace(/\.$/, ""));
  return [...new Set(dns)].sort().join(",");
}

/** The names key of a served leaf: its subject alternative names that are DNS names. */
export function leafNamesKey(details: Pick<CertificateDetails, "subjectAlternativeNames">): string {
  // Details objects are replaced whole, never changed: each one's key is computed once.
  let key = leafKeys.get(details);
  if (key === undefined) leafKeys.set(details, (key = namesKey(details.subjectAlternativeNames)));
  return key;
}

const leafKeys = new WeakMap<object, string>();

/**
 * Whether an issuance of these DNS names (a namesKey) and notBefore becomes the certificate's pending
 * deployment: a leaf it serves has exactly these names and an earlier notBefore, and no issuance as
 * recent is pending already. The leaves are every answering endpoint's, not only the certificate-level
 * one: that is the earliest-expiring, so after a move to shorter-lived certificates it is the new leaf
 * as soon as one node serves it, while the others still serve the old one. Both stores decide with this.
 */
export function awaitsIssuance(
  record: Pick<CertificateRecord, "details" | "endpoints" | "deployment">,
  issuance: { namesKey: string; issuedAt: number },
): boolean {
  if (record.deployment && record.deployment.issuedAt >= issuance.issuedAt) return false;
  const older = (leaf: CertificateDetails | null) => leaf !== null && leaf.notBefore < issuance.issuedAt && leafNamesKey(leaf) === issuance.namesKey;
  // The certificate's own leaf counts too: it is the one left when no endpoint answered.
  return older(record.details) || record.endpoints.some((endpoint) => older(endpoint.details));
}

/** The answering endpoints that serve a leaf older than the pending issuance. */
export function laggingEndpoints(deployment: Pick<PendingDeployment, "issuedAt">, endpoints: readonly EndpointRecord[]): EndpointRecord[] {
  return endpoints.filter((endpoint) => endpoint.details !== null && endpoint.details.notBefore < deployment.issuedAt);
}

/** CONTRACT §20's `deployment` field; null once every answering endpoint serves it (shown while none answers: nothing says it was served). */
export function presentDeployment(deployment: PendingDeployment | null, endpoints: readonly EndpointRecord[]): DeploymentView | null {
  if (!deployment) return null;
  const answering = endpoints.filter((endpoint) => endpoint.details !== null);
  const lagging = laggingEndpoints(deployment, answering).length;
  if (answering.length > 0 && lagging === 0) return null;
  return {
    issuedAt: iso(deployment.issuedAt),
    fingerprintSha256: deployment.fingerprintSha256,
    notAfter: iso(deployment.notAfter),
    issuer: deployment.issuer,
    seenAt: iso(deployment.seenAt),
    servedBy: answering.length - lagging,
    endpoints: answering.length,
  };
}

export interface DeploymentView {
  issuedAt: string;
  fingerprintSha256: string | null;
  notAfter: string;
  issuer: string;
  seenAt: string;
  servedBy: number;
  endpoints: number;
}

/** A `certificate.not_deployed`'s data: the issuance as the API shows it, and the addresses behind it. */
export type NotDeployed = {
  deployment: DeploymentView;
  lagging: string[];
};

/**
 * What a check that reached the endpoints means for the pending deployment: null once every answering
 * endpoint serves it (or a later leaf); announced (once, with the event's data) when its grace has passed
 * while an endpoint still serves an older leaf; else unchanged. The issuance it replaced is judged the
 * same way first, and forgotten once served everywhere or announced.
 */
export function judgeDeployment(
  deployment: PendingDeployment | null,
  endpoints: readonly EndpointRecord[],
  now: number,
): { deployment: PendingDeployment | null; notDeployed: NotDeployed[] } {
  if (!deployment) return { deployment, notDeployed: [] };
  const answering = endpoints.filter((endpoint) => endpoint.details !== null);
  if (answering.length === 0) return { deployment, notDeployed: [] };
  const lagging = laggingEndpoints(deployment, answering);
  // Every endpoint serves it or a later leaf: later than the one it replaced too.
  if (lagging.length === 0) return { deployment: null, notDeployed: [] };
  const notDeployed: NotDeployed[] = [];
  let next = deployment;
  const earlier = deployment.superseded;
  if (earlier) {
    const behind = laggingEndpoints(earlier, answering);
    if (behind.length === 0 || now >= deploymentDueAt(earlier)) {
      const { superseded: _judged, ...rest } = next;
      next = rest;
      if (behind.length > 0) notDeployed.push(announcement({ ...earlier, announced: true }, endpoints, behind));
    }
  }
  if (!next.announced && now >= deploymentDueAt(next)) {
    next = { ...next, announced: true };
    notDeployed.push(announcement(next, endpoints, lagging));
  }
  return { deployment: next, notDeployed };
}

function announcement(deployment: PendingDeployment, endpoints: readonly EndpointRecord[], lagging: EndpointRecord[]): NotDeployed {
  return { deployment: presentDeployment(deployment, endpoints)!, lagging: lagging.map((endpoint) => endpoint.address) };
}
