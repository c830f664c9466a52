/**
 * What one check means: the certificate's new state and the events it raises (CONTRACT §7). Pure:
 * the same previous state, outcome and time always give the same result, which is what lets a
 * writer that lost a race simply apply its outcome again to the fresher state.
 */
import { isTrustedChain, type CertificateDetails, type ChainCertificate, type ChainProblem, type NetFailureReason } from "../base/records.ts";
import type { AlertMemory, AlertPolicy, CertificateRecord, DaneVerdict, DnsFindings, EndpointRecord, EventRecord, EventType, Health, RenewalInfo, Renewing, RevocationState, SilentLeaf, TlsConnection } from "../base/records.ts";
import { newId } from "../base/ids.ts";
import { DAY, daysUntil, iso } from "../base/time.ts";
import { certificateStatus, isInvalid } from "../certificates/status.ts";
import { presentCertificate } from "../certificates/present.ts";
import { checkIntervalFor, renewalDeadline } from "../renewal/mod.ts";
import { deploymentCheckAt, judgeDeployment } from "../deployment/mod.ts";
import { httpHref } from "../net/mod.ts";
import { nextAlertAt, thresholdToAnnounce } from "./threshold_crossings.ts";
import { regularCheckAt } from "./check_phase.ts";

/** What a retrieval found. */
export type CheckOutcome =
  | {
      ok: true;
      /** Of every endpoint's chain and failure together: unchanged means nothing changed anywhere. */
      fingerprint: string;
      /** Of the answering endpoint whose leaf expires first. */
      details: CertificateDetails;
      problem: ChainProblem | null;
      tls?: TlsConnection | null;
      endpoints?: EndpointRecord[];
      /** What DNS said (CONTRACT §22); absent: nothing looked up, the findings held stay. */
      dns?: DnsFindings;
      /** The CAA verdict in `dns` came from this check's answers: a verdict kept through a DNS failure raises nothing. */
      caaAnswered?: boolean;
      /** When the servers answered (the check is judged at that moment); absent: when it is saved. */
      at?: number;
    }
  | { ok: false; reason: NetFailureReason; message: string; endpoints?: EndpointRecord[]; at?: number };

/**
 * Most certificates (leaves, or chain certificates) whose announced alerts are remembered. A node
 * that keeps an expired leaf and falls silent for days, while the others renew 24-hour certificates
 * twice a day, comes back after a dozen leaves or more: its leaf's alerts must still be remembered then.
 */
const MEMORY_SIZE = 32;
/** Leaves kept in alertMemory.servedLately: more than a name's nodes serve at once in a rollout. */
const SERVED_LATELY_SIZE = 8;
/** Leaves remembered as served at the last renewal announced (AlertMemory.generation). */
const GENERATION_SIZE = 16;
/**
 * Most revoked serials remembered as announced. Revocation is announced at most once per serial
 * (CONTRACT §14), so this is far above any real rotation; it only bounds what a hostile CA could grow.
 */
const REVOKED_MEMORY_SIZE = 256;
/** Serials (and `serial@windowEnd` requests) remembered as announced: far above any real rotation. */
const RENEWAL_MEMORY_SIZE = 64;
/** Most `serial|CAA set` pairs remembered as announced by `certificate.renewal_blocked`. */
const RENEWAL_BLOCKED_MEMORY_SIZE = 32;

export const EMPTY_ALERT_MEMORY: AlertMemory = { leaves: [], chain: [] };

/**
 * `serial@notAfter`, the key a leaf is remembered by. Built only when needed: a check compares leaves
 * with {@link sameLeaf} and {@link isLeafKeyOf}, which look at the expiry first (building a key and
 * comparing it was a tenth of the simulated year's time).
 */
function leafKey(details: CertificateDetails): string {
  return `${details.serialNumber}@${details.notAfter}`;
}

/**
 * A request's `data.window` and `data.explanationUrl`: those of the answer that asked (the CA may have
 * answered otherwise since, and the event is about that request), or the last answer's for
 * information kept before the asking answer was noted. The URL is read again as a URL, since an answer
 * kept before explanation URLs were kept parsed may still hold the CA's text until re-asked.
 */
function requestShown(info: RenewalInfo): { window: ReturnType<typeof presentWindow>; explanationUrl: string | null } {
  const asked = info.requested ?? { window: info.window, explanationUrl: info.explanationUrl };
  return { window: presentWindow(asked.window), explanationUrl: asked.explanationUrl ? httpHref(asked.explanationUrl) : null };
}

/** The same leaf: what {@link leafKey} would say, without building the keys. */
function sameLeaf(a: CertificateDetails, b: CertificateDetails): boolean {
  return a === b || (a.notAfter === b.notAfter && a.serialNumber === b.serialNumber);
}

/** Whether `key` (remembered with its leaf's `notAfter`) names the leaf `details`. */
function isLeafKeyOf(entry: { key: string; notAfter: number }, details: CertificateDetails): boolean {
  return entry.notAfter === details.notAfter && entry.key === leafKey(details);
}

export interface CheckPolicy {
  /** CERTKEEPER_CHECK_INTERVAL; a short-lived leaf is checked more often (CONTRACT §18). */
  intervalMs: number;
  /** The alert policy of a certificate added without one (CERTKEEPER_ALERT_POLICY). */
  alertPolicy: AlertPolicy;
  /** Consecutive failures before a certificate is declared unreachable (1: at once). */
  failuresBeforeUnreachable: number;
  /** Waits before re-trying after the 1st, 2nd, … failure that is not yet declared. */
  retryDelaysMs: number[];
}

export interface AppliedCheck {
  record: CertificateRecord;
  events: EventRecord[];
}

interface Draft {
  type: EventType;
  extra?: Record<string, unknown>;
}

/**
 * Applies `outcome` to `previous`. For a certificate being added, pass its initial record as
 * `previous` with `isNew`: no renewal is detected, and health starts as "ok", so a certificate added
 * invalid, expired or inside a threshold is announced like any other.
 */
export function applyCheck(
  previous: CertificateRecord,
  outcome: CheckOutcome,
  now: number,
  policy: CheckPolicy,
  options: {
    isNew?: boolean;
    /**
     * When the result is saved, if after `now` (the moment the servers answered, at which the check is
     * judged): the time of its events and of the change. Events are listed in the order they are saved.
     */
    savedAt?: number;
  } = {},
): AppliedCheck {
  const drafts: Draft[] = [];
  const next: CertificateRecord = { ...previous, lastCheckedAt: now };

  if (!outcome.ok) {
    next.failureCount = previous.failureCount + 1;
    if (next.failureCount < policy.failuresBeforeUnreachable) {
      // Not declared yet: one lost packet raises no alert. Try again shortly; announce nothing.
      const delay = policy.retryDelaysMs[next.failureCount - 1] ?? policy.retryDelaysMs.at(-1) ?? policy.intervalMs;
      next.nextCheckAt = now + Math.min(delay, policy.intervalMs);
      return { record: next, events: [] };
    }
    next.failure = outcome.reason;
    next.health = "unreachable";
    const endpoints = outcome.endpoints ?? [];
    if (!sameEndpoints(previous.endpoints, endpoints)) next.endpoints = endpoints;
    rememberSilentNodes(previous, next, endpoints.length === 0, now);
    if (previous.health !== "unreachable") drafts.push({ type: "certificate.unreachable", extra: { error: outcome.message } });
  } else {
    const renewed =
      !options.isNew &&
      (outcome.details.serialNumber !== previous.details.serialNumber ||
        outcome.details.notAfter > previous.details.notAfter);
    const unchanged =
      outcome.fingerprint === previous.fingerprint &&
      outcome.problem === previous.problem &&
      sameRevocation(outcome.details.revocation, previous.details.revocation) &&
      sameRenewalInfo(outcome.details.renewalInfo, previous.details.renewalInfo);
    const endpoints = outcome.endpoints ?? [];
    next.fingerprint = outcome.fingerprint;
    // Keep the stored objects when nothing changed, so the store can skip rewriting them.
    next.details = unchanged ? previous.details : outcome.details;
    next.endpoints = sameEndpoints(previous.endpoints, endpoints) ? previous.endpoints : endpoints;
    next.tls = outcome.tls ?? null;
    next.problem = outcome.problem;
    next.failure = null;
    next.failureCount = 0;
    rememberSilentNodes(previous, next, false, now);
    // Leaves the answering nodes serve. (A few leaves: an array, cheaper here than a set.)
    const served: CertificateDetails[] = [];
    for (const { details } of endpoints) {
      if (details && !served.some((leaf) => sameLeaf(leaf, details))) served.push(details);
    }
    if (next.endpoints !== previous.endpoints || next.details !== previous.details) noteServedLately(next, served.length > 0 ? served : [next.details]);
    // A pending renewal is announced once its old leaf is gone: no answering node serves it (whatever
    // they serve instead), and no silent node is presumed to (CONTRACT §20). If by then the
    // certificate-level leaf is another than its new one, the move to that one tells it (below).
    const pending = next.alertMemory.renewing;
    let replaced: Renewing["previous"] | undefined;
    /** When the leaf `replaced` names was issued (unknown for a renewal pending from before it was kept). */
    let replacedIssuedAt: number | undefined;
    /** certificate.renewed to the certificate-level leaf: once per leaf, however its way there went. */
    const announceRenewal = (from: Renewing["previous"]) => {
      replaced = undefined;
      const to = leafKey(next.details);
      const announced = next.alertMemory.renewedTo ?? [];
      if (announced.includes(to)) return;
      drafts.push({ type: "certificate.renewed", extra: { previous: from } });
      // The leaves served now: by the answering nodes, and presumed by the silent ones (a node that
      // misses this check is back with its leaf of this round, no renewal then).
      const generation = served.map(leafKey);
      for (const { key } of next.alertMemory.silent ?? []) if (!generation.includes(key)) generation.push(key);
      next.alertMemory = { ...next.alertMemory, renewedTo: [to, ...announced].slice(0, MEMORY_SIZE), generation: generation.slice(0, GENERATION_SIZE) };
    };
    if (pending && !served.some((leaf) => leafKey(leaf) === pending.oldKey) && !presumedServed(next.alertMemory, pending.oldKey, now, pending.untilBack)) {
      next.alertMemory = withoutRenewing(next.alertMemory);
      if (leafKey(outcome.details) === pending.newKey) announceRenewal(pending.previous);
      else {
        replaced = pending.previous;
        replacedIssuedAt = pending.oldNotBefore;
      }
    }
    if (renewed) {
      // The earliest-expiring leaf is another one. Seen before (a node that flips back to an old
      // certificate): its alerts are where they were, and it is no renewal.
      const leaves = remember(next.alertMemory.leaves, {
          key: leafKey(previous.details),
          notAfter: previous.details.notAfter,
          alertedThreshold: previous.alertedThreshold,
          expiryAlerted: previous.expiryAlerted,
          chainExpiry: previous.details.chainExpiry ?? null,
        }, (e) => e.key);
      const known = leaves.find((entry) => isLeafKeyOf(entry, outcome.details));
      next.alertMemory = { ...next.alertMemory, leaves };
      if (known) {
        next.alertedThreshold = known.alertedThreshold;
        next.expiryAlerted = known.expiryAlerted;
        // Back to the leaf a pending renewal replaces (the rollout undone): still pending, announced
        // when no node serves it any more.
      } else if (movedBySilence(previous, next, now)) {
        // No node replaced a certificate: nodes fell silent or came back. No renewal now; nothing was
        // announced for this leaf (it was not the certificate-level one). The old leaf's node is silent:
        // if it is back with the old leaf, that was all; if it is back with another (or stays away past
        // its hold), the old leaf was replaced, and that is announced then (pending, as for a rollout).
        // A leaf not issued after the old one waits for that node, however long it is silent.
        if (!next.alertMemory.renewing) {
          const renewedFrom = { serialNumber: previous.details.serialNumber, expiresAt: iso(previous.details.notAfter) };
          const renewing: Renewing = { oldKey: leafKey(previous.details), newKey: leafKey(outcome.details), previous: renewedFrom, oldNotBefore: previous.details.notBefore };
          if (outcome.details.notBefore <= previous.details.notBefore) renewing.untilBack = true;
          next.alertMemory = { ...next.alertMemory, renewing };
        }
        next.alertedThreshold = null;
        next.expiryAlerted = false;
      } else {
        const oldKey = leafKey(previous.details);
        const newKey = leafKey(outcome.details);
        // (The leaf a pending renewal was for, gone now, is the one replaced.)
        const renewedFrom = replaced ?? { serialNumber: previous.details.serialNumber, expiresAt: iso(previous.details.notAfter) };
        // A renewal still pending whose old leaf is served, or presumed so within its hold: this move
        // waits with it (told when that old leaf goes).
        const standing = next.alertMemory.renewing;
        const waiting = standing !== undefined && (served.some((leaf) => leafKey(leaf) === standing.oldKey) || presumedServed(next.alertMemory, standing.oldKey, now));
        if (!replaced && next.alertMemory.generation?.includes(newKey)) {
          // The leaf it moved to was served already when the last renewal was announced: nodes that
          // each have a certificate of their own, renewed on their own days, and the one whose leaf
          // expired first was renewed. That leaf is not new; the round is announced when the last
          // node serving a leaf of the last round moves on (the certificate-level leaf then moves
          // to a leaf of this round).
        } else if (waiting) {
          // It now waits for this leaf: announced as the renewal to it once the old leaf is gone (a
          // silent node's hold counted as for a leaf issued after the old one, when this one is).
          const renewing: Renewing = { oldKey: standing.oldKey, newKey, previous: standing.previous };
          if (standing.oldNotBefore !== undefined) renewing.oldNotBefore = standing.oldNotBefore;
          if (standing.oldNotBefore === undefined ? standing.untilBack : outcome.details.notBefore <= standing.oldNotBefore) renewing.untilBack = true;
          next.alertMemory = { ...next.alertMemory, renewing };
        } else if (!replaced && served.length === 2 && outcome.details.notBefore < previous.details.notBefore && served.some((leaf) => sameLeaf(leaf, previous.details))) {
          // A node serving an older leaf than the others (a node back from before, or started from a
          // stale image): no renewal to it. Its leaf is the one to be replaced, by the one the others
          // serve: announced when no node serves it any more.
          next.alertMemory = { ...next.alertMemory, renewing: { oldKey: newKey, newKey: oldKey, previous: { serialNumber: outcome.details.serialNumber, expiresAt: iso(outcome.details.notAfter) }, oldNotBefore: outcome.details.notBefore } };
        } else if (!replaced && ((served.length === 2 && served.some((leaf) => sameLeaf(leaf, previous.details))) || presumedServed(next.alertMemory, oldKey, now))) {
          // Some node still serves the old leaf (the new one expires before it), or a silent one is
          // presumed to: renewed once none does (CONTRACT §20), not at the first node. (Nodes serving
          // leaves of their own, three or more at once, are announced as the certificate-level leaf moves.)
          next.alertMemory = { ...next.alertMemory, renewing: { oldKey, newKey, previous: renewedFrom, oldNotBefore: previous.details.notBefore } };
        } else {
          // Announced now; a renewal still pending is told by this one.
          announceRenewal(renewedFrom);
          next.alertMemory = withoutRenewing(next.alertMemory);
        }
        next.alertedThreshold = null;
        next.expiryAlerted = false;
      }
      // A leaf whose overdue alert was announced while another node served it: the thresholds that
      // alert covered stay covered.
      const covered = next.alertMemory.overdueThresholds?.find((entry) => entry.serial === outcome.details.serialNumber);
      if (covered && (next.alertedThreshold === null || covered.threshold < next.alertedThreshold)) next.alertedThreshold = covered.threshold;
    }
    // A pending renewal's old leaf is gone while the certificate-level leaf stayed (or moved by
    // silence): announced now if that leaf was issued after the old one (not a forgotten node's older
    // leaf; without the old one's issue, if it outlives it), unless it was announced renewed already.
    if (replaced && (replacedIssuedAt !== undefined ? next.details.notBefore > replacedIssuedAt : next.details.notAfter > Date.parse(replaced.expiresAt))) announceRenewal(replaced);
    // Revocation is final: each serial is announced once, when first seen revoked, whichever endpoint
    // serves it (CONTRACT §14); a leaf other than the certificate-level one is named in data.endpoint.
    const announcedRevoked = new Set(next.alertMemory.revoked ?? []);
    if (!options.isNew && previous.details.revocation?.status === "revoked") announcedRevoked.add(previous.details.serialNumber);
    const revokedNow: Array<{ details: CertificateDetails; address: string | null }> = [];
    if (outcome.details.revocation?.status === "revoked") revokedNow.push({ details: outcome.details, address: null });
    for (const e of endpoints) if (e.details?.revocation?.status === "revoked") revokedNow.push({ details: e.details, address: e.address });
    const newlyRevoked: string[] = [];
    for (const { details, address } of revokedNow) {
      const serial = details.serialNumber;
      if (announcedRevoked.has(serial)) continue;
      announcedRevoked.add(serial);
      newlyRevoked.push(serial);
      drafts.push(
        serial === outcome.details.serialNumber
          ? { type: "certificate.revoked" }
          : { type: "certificate.revoked", extra: { endpoint: endpointNamed(address, details) } },
      );
    }
    if (newlyRevoked.length > 0) {
      next.alertMemory = { ...next.alertMemory, revoked: [...newlyRevoked, ...(next.alertMemory.revoked ?? [])].slice(0, REVOKED_MEMORY_SIZE) };
    }
    // An issuance recorded for these names (CONTRACT §20): gone once every answering endpoint serves it;
    // announced once when its grace passes while one still serves an older leaf.
    const deployment = judgeDeployment(next.deployment ?? null, next.endpoints, now);
    next.deployment = deployment.deployment;
    for (const extra of deployment.notDeployed) drafts.push({ type: "certificate.not_deployed", extra });
    if (outcome.dns !== undefined) next.dns = outcome.dns;
    // CAA that will make the next renewal fail (CONTRACT §22): once per serial and record set, and
    // only on answers of this check: DNS failures never raise an event.
    const caa = next.dns?.caa;
    if (outcome.caaAnswered && caa?.status === "forbidden" && caa.blocking) {
      const key = `${next.details.serialNumber}|${caa.blocking.key}`;
      const announced = next.alertMemory.renewalBlocked ?? [];
      if (!announced.includes(key)) {
        const { name, setAt, property, reason, records } = caa.blocking;
        drafts.push({ type: "certificate.renewal_blocked", extra: { caa: { name, setAt, property, reason, records, issuerDomain: caa.issuerDomain } } });
        next.alertMemory = { ...next.alertMemory, renewalBlocked: [key, ...announced].slice(0, RENEWAL_BLOCKED_MEMORY_SIZE) };
      }
    }
    const health: Health = isInvalid(next, now) ? "invalid" : "ok";
    next.health = health;
    if (health === "invalid" && previous.health !== "invalid") drafts.push({ type: "certificate.invalid" });
    if (health === "ok" && previous.health !== "ok") {
      const { status } = certificateStatus(next, now);
      if (status === "valid" || status === "expiring") drafts.push({ type: "certificate.recovered" });
    }
  }

  // Time-based alerts, on the details we hold (the last retrieved ones when unreachable).
  const { notAfter, serialNumber } = next.details;
  const alertPolicy = next.alertPolicy ?? "days";
  const renewal = renewalDeadline(next.details);
  if (now > notAfter) {
    if (!next.expiryAlerted) {
      drafts.push({ type: "certificate.expired" });
      next.expiryAlerted = true;
      // Past expiry no threshold is worth announcing any more for this serial.
      next.alertedThreshold = Math.min(...next.alertThresholds, next.alertedThreshold ?? Infinity);
      if (next.alertedThreshold === Infinity) next.alertedThreshold = null;
    }
  } else {
    // The CA asks for early replacement (CONTRACT §19), under both policies: once per serial and window
    // end, judged on a leaf just retrieved. A window that had already ended covers the overdue alert.
    const info = next.details.renewalInfo;
    if (outcome.ok && info && info.requestedEnd !== null) {
      const key = `${serialNumber}@${info.requestedEnd}`;
      if (!(next.alertMemory.requested ?? []).includes(key)) {
        drafts.push({ type: "certificate.renewal_requested", extra: requestShown(info) });
        next.alertMemory = { ...next.alertMemory, requested: [key, ...(next.alertMemory.requested ?? [])].slice(0, RENEWAL_MEMORY_SIZE) };
        if (info.requestedEnd <= now && alertPolicy === "renewal") coverOverdue(next, now);
      }
    }
    const overdueAnnounced = (next.alertMemory.overdue ?? []).includes(serialNumber);
    if (alertPolicy === "renewal" && !overdueAnnounced) {
      // Before the deadline a leaf is news only if something else is wrong (CONTRACT §18). At the
      // deadline, judged on a leaf an endpoint serves now: one renewal_overdue, which covers every
      // threshold crossed so far.
      if (outcome.ok && now >= renewal.deadline) {
        drafts.push({
          type: "certificate.renewal_overdue",
          extra: {
            deadline: iso(renewal.deadline),
            source: renewal.source,
            window: presentWindow(renewal.window),
            daysUntilExpiry: daysUntil(notAfter, now),
          },
        });
        coverOverdue(next, now);
      }
    } else {
      // Switched to days: thresholds the overdue alert covered were never raised (CONTRACT §18: the
      // lowest crossed threshold not yet raised for the serial is raised now).
      const covered = next.alertMemory.covered;
      if (alertPolicy === "days" && covered) {
        if (covered.serial === serialNumber) next.alertedThreshold = covered.raised;
        next.alertMemory = withoutCovered(next.alertMemory);
      }
      const threshold = thresholdToAnnounce(next.alertThresholds, notAfter, next.alertedThreshold, now);
      if (threshold !== null) {
        drafts.push({ type: "certificate.expiring", extra: { threshold } });
        next.alertedThreshold = threshold;
        // A threshold raised: those above it stay unraised, never owed (only the lowest crossed is).
        if (next.alertMemory.covered) next.alertMemory = withoutCovered(next.alertMemory);
      }
    }
  }

  // The same request about a leaf another address serves (a rollout under way, the status judged
  // over every endpoint, CONTRACT §11): once per serial and window end, naming that address in
  // data.endpoint, as a revocation of such a leaf is; also while the certificate-level leaf has
  // expired (a forgotten node still serving it).
  if (outcome.ok) {
    for (const endpoint of next.endpoints ?? []) {
      const details = endpoint.details;
      const other = details?.renewalInfo;
      if (!details || details.serialNumber === serialNumber || now > details.notAfter || !other || other.requestedEnd === null) continue;
      const key = `${details.serialNumber}@${other.requestedEnd}`;
      if ((next.alertMemory.requested ?? []).includes(key)) continue;
      drafts.push({
        type: "certificate.renewal_requested",
        extra: { ...requestShown(other), endpoint: endpointNamed(endpoint.address, details) },
      });
      next.alertMemory = { ...next.alertMemory, requested: [key, ...(next.alertMemory.requested ?? [])].slice(0, RENEWAL_MEMORY_SIZE) };
      // A window that had already ended covers that leaf's overdue alert, as for the certificate-level leaf.
      if (other.requestedEnd <= now && alertPolicy === "renewal") coverOtherOverdue(next, details, now);
    }
  }
  // The deadline of a leaf another address serves (a rollout stopped half way, a forgotten node) makes
  // the status expiring (renewal_overdue) as the certificate-level leaf's would: one renewal_overdue
  // for it too, once per serial, naming that address in data.endpoint (as a request for early
  // replacement of such a leaf is).
  if (alertPolicy === "renewal" && outcome.ok) {
    for (const endpoint of next.endpoints ?? []) {
      const details = endpoint.details;
      if (!details || details.serialNumber === serialNumber || now > details.notAfter) continue;
      if ((next.alertMemory.overdue ?? []).includes(details.serialNumber)) continue;
      const other = renewalDeadline(details);
      if (now < other.deadline) continue;
      drafts.push({
        type: "certificate.renewal_overdue",
        extra: {
          deadline: iso(other.deadline),
          source: other.source,
          window: presentWindow(other.window),
          daysUntilExpiry: daysUntil(details.notAfter, now),
          endpoint: endpointNamed(endpoint.address, details),
        },
      });
      coverOtherOverdue(next, details, now);
      // An older leaf than the certificate-level one (a rollout to shorter-lived certificates stopped
      // half way, or under way when the certificate was added): its replacement by that leaf is owed
      // certificate.renewed, announced once no node serves it (CONTRACT §20), as for a rollout seen
      // from its start.
      if (!next.alertMemory.renewing && details.notBefore < next.details.notBefore) {
        const renewing: Renewing = {
          oldKey: leafKey(details),
          newKey: leafKey(next.details),
          previous: { serialNumber: details.serialNumber, expiresAt: iso(details.notAfter) },
          oldNotBefore: details.notBefore,
        };
        next.alertMemory = { ...next.alertMemory, renewing };
      }
    }
  }

  // A certificate above a leaf that expires before it (CONTRACT §13): its thresholds, once per serial.
  // The certificate-level leaf's chain first, then every other leaf an endpoint serves now: a node
  // renewed under a short-lived intermediate makes the status `expiring` (chain_expiring), so it is
  // announced too (named in data.endpoint), not only once the intermediate has expired.
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

  let due = leafDue(next, next.details, next.alertedThreshold, next.expiryAlerted, now);
  // Other nodes' leaves, served now or earlier: when one of them crosses a threshold it may be the
  // earliest-expiring one by then (its node answering while the current one's does not), so look then.
  // Each is remembered (with what was announced for it), served by a node now or by a silent one at its
  // last answer, or several of these. (A few leaves, at most MEMORY_SIZE and the nodes': found in
  // arrays, cheaper here than sets.)
  const current = next.details;
  const others: Array<{ remembered?: AlertMemory["leaves"][number]; served?: CertificateDetails; silent?: SilentLeaf }> = [];
  // (The remembered leaves' keys are unique: {@link remember} replaces an entry with the same key.)
  for (const entry of next.alertMemory.leaves) if (!isLeafKeyOf(entry, current)) others.push({ remembered: entry });
  for (const { details } of next.endpoints) {
    if (!details || sameLeaf(details, current)) continue;
    const other = others.find((o) => (o.served ? sameLeaf(o.served, details) : isLeafKeyOf(o.remembered!, details)));
    if (!other) others.push({ served: details });
    else other.served ??= details;
  }
  for (const leaf of next.alertMemory.silent ?? []) {
    if (isLeafKeyOf(leaf, current)) continue;
    const other = others.find((o) => (o.served ? isLeafKeyOf(leaf, o.served) : o.remembered?.key === leaf.key));
    if (!other) others.push({ silent: leaf });
    else other.silent ??= leaf;
  }
  for (const { remembered, served, silent } of others) {
    const notAfter = remembered?.notAfter ?? served?.notAfter ?? silent!.notAfter;
    const at = nextAlertAt(next.alertThresholds, notAfter, remembered?.alertedThreshold ?? null, remembered?.expiryAlerted ?? false, now);
    if (at !== null) due = Math.min(due, at);
    // Its renewal deadline: the status of the node serving it changes then; and its notBefore when it
    // is served before it (the certificate is invalid until then).
    const deadline = served ? renewalDeadline(served).deadline : silent?.deadline;
    if (deadline !== undefined && deadline > now) due = Math.min(due, deadline);
    if (served && served.notBefore > now) due = Math.min(due, served.notBefore);
    const chain = remembered ? remembered.chainExpiry : (served?.chainExpiry ?? silent?.chainExpiry ?? null);
    if (chain && chain.notAfter < notAfter) {
      const alerted = next.alertMemory.chain.find((entry) => entry.serial === chain.serialNumber)?.alertedThreshold ?? null;
      const chainAt = nextAlertAt(next.alertThresholds, chain.notAfter, alerted, false, now);
      if (chainAt !== null) due = Math.min(due, chainAt);
    }
  }
  // A leaf served lately, issued after the certificate-level one, that no answering node serves now
  // (a rollout's new leaf, its node back on an older one for a while, or another node's): it is the
  // certificate-level leaf again, or that node's, as soon as the older one goes, and its deadline's
  // check must not wait for the regular one.
  for (const lately of next.alertMemory.servedLately ?? []) {
    if (lately.notBefore > current.notBefore && lately.deadline > now) due = Math.min(due, lately.deadline);
  }
  // The end of a pending deployment's grace: the endpoints are looked at then. Once it has passed
  // unjudged (no endpoint answered), the next check on the usual schedule judges it: a dead host is
  // not re-checked at every turn of the scheduler.
  due = Math.min(due, deploymentCheckAt(next.deployment ?? null, now));
  // The regular re-check falls on the certificate's own phase of its interval (check_phase.ts): never
  // later than one interval from now, and spread with the others.
  const regular = regularCheckAt(next.id, now, checkIntervalFor(next.details, policy.intervalMs, now, leafTrusted(next)), next.details.renewalInfo?.nextAt);
  next.nextCheckAt = Math.min(regular, due, chainDue ?? Infinity);
  const savedAt = Math.max(now, options.savedAt ?? now);
  if (drafts.length > 0 || changed(previous, next)) next.updatedAt = savedAt;
  return { record: next, events: drafts.map((draft) => ({ ...toEvent(next, draft, now), createdAt: savedAt })) };
}

/**
 * The next moment something about the leaf `details` becomes due: its renewal deadline, an armed
 * threshold crossing (under the renewal policy, only those after the overdue alert), its expiry, or
 * its notBefore when it is served before it.
 */
function leafDue(record: CertificateRecord, details: CertificateRecord["details"], alerted: number | null, expiryAlerted: boolean, now: number): number {
  const { deadline } = renewalDeadline(details);
  let due = deadline > now ? deadline : Infinity;
  const waitsForDeadline = (record.alertPolicy ?? "days") === "renewal" && !(record.alertMemory.overdue ?? []).includes(details.serialNumber);
  // Under the renewal policy, thresholds crossed before the deadline are covered by the overdue alert.
  const at = nextAlertAt(record.alertThresholds, details.notAfter, alerted, expiryAlerted, waitsForDeadline ? Math.max(now, deadline) : now);
  if (at !== null) due = Math.min(due, at);
  // Expiry is never covered by the deadline: it is due at its moment whatever the deadline says.
  if (!expiryAlerted && details.notAfter + 1 > now) due = Math.min(due, details.notAfter + 1);
  // A leaf served before its notBefore is valid from then on: certificate.recovered is due then.
  if (details.notBefore > now) due = Math.min(due, details.notBefore);
  return due;
}

/**
 * Records `certificate.renewal_overdue` as announced for the certificate-level serial (or covered by a
 * request), with every threshold crossed by `now`: later thresholds are raised as they are crossed.
 */
function coverOverdue(record: CertificateRecord, now: number): void {
  const { serialNumber, notAfter } = record.details;
  const overdue = [serialNumber, ...(record.alertMemory.overdue ?? []).filter((serial) => serial !== serialNumber)];
  record.alertMemory = { ...record.alertMemory, overdue: overdue.slice(0, RENEWAL_MEMORY_SIZE) };
  const crossed = thresholdToAnnounce(record.alertThresholds, notAfter, record.alertedThreshold, now);
  if (crossed === null) return;
  record.alertMemory = { ...record.alertMemory, covered: { serial: serialNumber, raised: record.alertedThreshold } };
  record.alertedThreshold = crossed;
}

/**
 * Records `certificate.renewal_overdue` as announced (or covered by a request) for `details`, a leaf
 * another node serves, with the thresholds crossed by `now`: restored if it becomes the
 * certificate-level leaf, when only later thresholds are raised.
 */
function coverOtherOverdue(record: CertificateRecord, details: CertificateDetails, now: number): void {
  const { serialNumber } = details;
  const memory = record.alertMemory;
  const overdue = [serialNumber, ...(memory.overdue ?? []).filter((serial) => serial !== serialNumber)].slice(0, RENEWAL_MEMORY_SIZE);
  record.alertMemory = { ...memory, overdue };
  const crossed = thresholdToAnnounce(record.alertThresholds, details.notAfter, null, now);
  if (crossed === null) return;
  const covered = [{ serial: serialNumber, threshold: crossed }, ...(memory.overdueThresholds ?? []).filter((e) => e.serial !== serialNumber)];
  record.alertMemory = { ...record.alertMemory, overdueThresholds: covered.slice(0, RENEWAL_MEMORY_SIZE) };
}

/**
 * Whether the certificate-level leaf's own chain is trusted (its name may still not match): the
 * certificate's problem may be another node's (endpoints_outcome.ts), which must not slow the checks
 * of a short-lived leaf a trusted CA issued.
 */
function leafTrusted(record: CertificateRecord): boolean {
  const own = record.endpoints?.find((endpoint) => endpoint.details && sameLeaf(endpoint.details, record.details));
  return isTrustedChain(own ? own.problem : record.problem);
}

/** The address and leaf an event about another node's leaf names in `data.endpoint`. */
function endpointNamed(address: string | null, details: CertificateDetails): { address: string | null; serialNumber: string; expiresAt: string } {
  return { address, serialNumber: details.serialNumber, expiresAt: iso(details.notAfter) };
}

function presentWindow(window: RenewalInfo["window"] | null | undefined): { start: string; end: string } | null {
  return window ? { start: iso(window.start), end: iso(window.end) } : null;
}

/** Whether a check changed anything a caller can see besides lastCheckedAt. */
function changed(a: CertificateRecord, b: CertificateRecord): boolean {
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
function sameRenewalInfo(a: RenewalInfo | null | undefined, b: RenewalInfo | null | undefined, visibleOnly = false): boolean {
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
function sameEndpoints(a: readonly EndpointRecord[], b: readonly EndpointRecord[]): boolean {
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

function sameDane(a: DaneVerdict | null | undefined, b: DaneVerdict | null | undefined): boolean {
  return (a ?? null) === (b ?? null) || (a?.status === b?.status && a?.validated === b?.validated);
}

/** The same revocation answer (the source hands back the stored object when it reused it). */
function sameRevocation(a: RevocationState | undefined, b: RevocationState | undefined): boolean {
  return a === b || (a?.status === b?.status && a?.checkedAt === b?.checkedAt && a?.validUntil === b?.validUntil);
}

/**
 * Whether the node at `address` served `leaf` at its last answer before this check (known from its
 * endpoint, or from the silent memory when it did not answer then).
 */
function servedAtLastAnswer(previous: CertificateRecord, address: string, leaf: CertificateDetails): boolean {
  const endpoint = previous.endpoints.find((e) => e.address === address);
  if (endpoint?.details) return sameLeaf(endpoint.details, leaf);
  const silent = previous.alertMemory.silent?.find((e) => e.address === address);
  return silent !== undefined && isLeafKeyOf(silent, leaf);
}

/**
 * Whether the certificate-level leaf moved only because nodes fell silent or came back, not because
 * any node replaced its certificate: every answering node serves the old certificate-level leaf or
 * what it served at its last answer, and the old leaf is still served, or presumed so (its node
 * silent). A node changing its leaf, or one never heard before, makes it a renewal.
 */
function movedBySilence(previous: CertificateRecord, next: CertificateRecord, now: number): boolean {
  const old = previous.details;
  let oldServed = presumedServed(next.alertMemory, leafKey(old), now);
  for (const { address, details } of next.endpoints) {
    if (!details) continue;
    if (sameLeaf(details, old)) oldServed = true;
    else if (!servedAtLastAnswer(previous, address, details)) return false;
  }
  return oldServed;
}

/**
 * Whether a silent node is presumed to serve the leaf `key` still: it served it at its last answer,
 * and has been silent for less than a day (a tenth of the leaf's lifetime, when shorter). A node
 * silent longer holds no renewal up: it may be gone for good while the name still lists it
 * (`howeverLong`: a renewal marked untilBack waits for it all the same).
 */
function presumedServed(memory: AlertMemory, key: string, now: number, howeverLong = false): boolean {
  return (memory.silent ?? []).some((leaf) => leaf.key === key && (howeverLong || now - leaf.since < Math.min(DAY, (leaf.notAfter - leaf.notBefore) / 10)));
}

function withoutRenewing(memory: AlertMemory): AlertMemory {
  const { renewing: _, ...rest } = memory;
  return rest;
}

function withoutCovered(memory: AlertMemory): AlertMemory {
  const { covered: _, ...rest } = memory;
  return rest;
}

/**
 * Keeps `next.alertMemory.silent` (see {@link AlertMemory}) for the nodes silent in `next.endpoints`:
 * the leaf each served at its last answer, and since when it is silent; an expired leaf too, so that
 * its node coming back with it is still no renewal (its moments are past: none is looked at). When
 * the name `unresolved` (a failed lookup), every node is presumed silent, not gone. The stored list
 * stays when nothing changed.
 */
function rememberSilentNodes(previous: CertificateRecord, next: CertificateRecord, unresolved: boolean, now: number): void {
  const before = previous.alertMemory.silent;
  let nodes: ReadonlyArray<{ address: string; details: CertificateDetails | null }> = next.endpoints;
  if (unresolved) {
    const addresses = new Set([...previous.endpoints.map((e) => e.address), ...(before ?? []).map((e) => e.address)]);
    nodes = [...addresses].map((address) => ({ address, details: null }));
  }
  let silent: SilentLeaf[] | undefined;
  for (const { address, details } of nodes) {
    if (details) continue;
    const last = previous.endpoints.find((endpoint) => endpoint.address === address)?.details;
    let leaf: SilentLeaf | undefined;
    if (!last) leaf = before?.find((entry) => entry.address === address);
    else leaf = { address, key: leafKey(last), notBefore: last.notBefore, notAfter: last.notAfter, deadline: renewalDeadline(last).deadline, chainExpiry: last.chainExpiry ?? null, since: now };
    if (leaf) (silent ??= []).push(leaf);
  }
  if (silent?.length === before?.length && (silent ?? []).every((leaf, i) => leaf === before![i])) return;
  if (silent) next.alertMemory = { ...next.alertMemory, silent };
  else {
    const { silent: _, ...rest } = next.alertMemory;
    next.alertMemory = rest;
  }
}

/**
 * Notes in alertMemory.servedLately the leaves answering nodes serve now, with their renewal deadlines
 * as known now (an answer from the CA moves one), keeping the most recently issued: a new object only
 * when something changed.
 */
function noteServedLately(record: CertificateRecord, leaves: readonly CertificateDetails[]): void {
  const known = record.alertMemory.servedLately ?? [];
  let list = known;
  for (const leaf of leaves) {
    const key = leafKey(leaf);
    const { deadline } = renewalDeadline(leaf);
    if (list.some((entry) => entry.key === key && entry.deadline === deadline)) continue;
    list = [{ key, notBefore: leaf.notBefore, deadline }, ...list.filter((entry) => entry.key !== key)];
  }
  if (list === known) return;
  const servedLately = list.sort((a, b) => b.notBefore - a.notBefore).slice(0, SERVED_LATELY_SIZE);
  record.alertMemory = { ...record.alertMemory, servedLately };
}

/** `entry` first (replacing an older entry with its key), then the most recent others, MEMORY_SIZE at most. */
function remember<T>(list: readonly T[], entry: T, key: (item: T) => string): T[] {
  return [entry, ...list.filter((item) => key(item) !== key(entry))].slice(0, MEMORY_SIZE);
}

function toEvent(record: CertificateRecord, draft: Draft, now: number): EventRecord {
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
