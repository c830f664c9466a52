/**
 * Renewals and rotations: whether the certificate-level leaf moved to a renewed leaf, back to one seen
 * before, or only because nodes fell silent or came back, and when certificate.renewed is announced
 * (once per leaf, once no node serves the old one: CONTRACT §20).
 */
import type { CertificateDetails, CertificateRecord, Renewing } from "../base/records.ts";
import { iso } from "../base/time.ts";
import { GENERATION_SIZE, isLeafKeyOf, leafKey, MEMORY_SIZE, presumedServed, remember, sameLeaf, withoutRenewing } from "./alert_memory.ts";
import type { AnsweredOutcome, CheckState } from "./check_state.ts";

/** What the renewal steps of one check share besides the CheckState. */
interface Rotation {
  /** Leaves the answering nodes serve. */
  readonly served: readonly CertificateDetails[];
  /** The leaf a pending renewal replaced, its old leaf gone this check, while not announced yet. */
  replaced?: Renewing["previous"];
  /** When the leaf `replaced` names was issued (unknown for a renewal pending from before it was kept). */
  replacedIssuedAt?: number;
}

/**
 * Renewals and rotations the answer shows, given the leaves the answering nodes serve. The steps run in
 * this order: a pending renewal whose old leaf is gone, a move of the certificate-level leaf, then the
 * pending renewal's announcement if the leaf stayed.
 */
export function followRenewals(state: CheckState<AnsweredOutcome>, served: readonly CertificateDetails[]): void {
  const { previous, outcome } = state;
  const renewed =
    !state.isNew &&
    (outcome.details.serialNumber !== previous.details.serialNumber ||
      outcome.details.notAfter > previous.details.notAfter);
  const rotation: Rotation = { served };
  settlePending(state, rotation);
  if (renewed) followNewLeaf(state, rotation);
  announceReplaced(state, rotation);
}

/** certificate.renewed to the certificate-level leaf: once per leaf, however its way there went. */
function announceRenewal(state: CheckState<AnsweredOutcome>, rotation: Rotation, from: Renewing["previous"]): void {
  const { next, drafts } = state;
  rotation.replaced = undefined;
  const to = leafKey(next.details);
  const announced = next.alertMemory.renewedTo ?? [];
  if (announced.includes(to)) return;
  drafts.push({ type: "certificate.renewed", extra: { previous: from } });
  // The leaves served now: by the answering nodes, and presumed by the silent ones (a node that
  // misses this check is back with its leaf of this round, no renewal then).
  const generation = rotation.served.map(leafKey);
  for (const { key } of next.alertMemory.silent ?? []) if (!generation.includes(key)) generation.push(key);
  next.alertMemory = { ...next.alertMemory, renewedTo: [to, ...announced].slice(0, MEMORY_SIZE), generation: generation.slice(0, GENERATION_SIZE) };
}

/**
 * A pending renewal is announced once its old leaf is gone: no answering node serves it (whatever
 * they serve instead), and no silent node is presumed to (CONTRACT §20). If by then the
 * certificate-level leaf is another than its new one, the move to that one tells it (followNewLeaf).
 */
function settlePending(state: CheckState<AnsweredOutcome>, rotation: Rotation): void {
  const { next, outcome, now } = state;
  const pending = next.alertMemory.renewing;
  if (pending && !rotation.served.some((leaf) => leafKey(leaf) === pending.oldKey) && !presumedServed(next.alertMemory, pending.oldKey, now, pending.untilBack)) {
    next.alertMemory = withoutRenewing(next.alertMemory);
    if (leafKey(outcome.details) === pending.newKey) announceRenewal(state, rotation, pending.previous);
    else {
      rotation.replaced = pending.previous;
      rotation.replacedIssuedAt = pending.oldNotBefore;
    }
  }
}

/**
 * The earliest-expiring leaf is another one. Seen before (a node that flips back to an old
 * certificate): its alerts are where they were, and it is no renewal.
 */
function followNewLeaf(state: CheckState<AnsweredOutcome>, rotation: Rotation): void {
  const { previous, next, outcome, now } = state;
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
    awaitSilentNode(state);
  } else {
    judgeRenewal(state, rotation);
  }
  // A leaf whose overdue alert was announced while another node served it: the thresholds that
  // alert covered stay covered.
  const covered = next.alertMemory.overdueThresholds?.find((entry) => entry.serial === outcome.details.serialNumber);
  if (covered && (next.alertedThreshold === null || covered.threshold < next.alertedThreshold)) next.alertedThreshold = covered.threshold;
}

/**
 * No node replaced a certificate: nodes fell silent or came back. No renewal now; nothing was
 * announced for this leaf (it was not the certificate-level one). The old leaf's node is silent:
 * if it is back with the old leaf, that was all; if it is back with another (or stays away past
 * its hold), the old leaf was replaced, and that is announced then (pending, as for a rollout).
 * A leaf not issued after the old one waits for that node, however long it is silent.
 */
function awaitSilentNode(state: CheckState<AnsweredOutcome>): void {
  const { previous, next, outcome } = state;
  if (!next.alertMemory.renewing) {
    const renewedFrom = { serialNumber: previous.details.serialNumber, expiresAt: iso(previous.details.notAfter) };
    const renewing: Renewing = { oldKey: leafKey(previous.details), newKey: leafKey(outcome.details), previous: renewedFrom, oldNotBefore: previous.details.notBefore };
    if (outcome.details.notBefore <= previous.details.notBefore) renewing.untilBack = true;
    next.alertMemory = { ...next.alertMemory, renewing };
  }
  next.alertedThreshold = null;
  next.expiryAlerted = false;
}

/** A node replaced its certificate: the renewal is announced now, or left pending until the old leaf goes. */
function judgeRenewal(state: CheckState<AnsweredOutcome>, rotation: Rotation): void {
  const { previous, next, outcome, now } = state;
  const { served, replaced } = rotation;
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
  } else if (!replaced && served.length >= 2 && outcome.details.notBefore < previous.details.notBefore && served.some((leaf) => sameLeaf(leaf, previous.details))) {
    // A node serving an older leaf than the others (a node back from before, or started from a
    // stale image), beside the certificate-level leaf it had (other nodes with leaves of their own
    // or not): no renewal to it. Its leaf is the one to be replaced, by the one the others serve:
    // announced when no node serves it any more.
    next.alertMemory = { ...next.alertMemory, renewing: { oldKey: newKey, newKey: oldKey, previous: { serialNumber: outcome.details.serialNumber, expiresAt: iso(outcome.details.notAfter) }, oldNotBefore: outcome.details.notBefore } };
  } else if (!replaced && ((served.length === 2 && served.some((leaf) => sameLeaf(leaf, previous.details))) || presumedServed(next.alertMemory, oldKey, now))) {
    // Some node still serves the old leaf (the new one expires before it), or a silent one is
    // presumed to: renewed once none does (CONTRACT §20), not at the first node. (Nodes serving
    // leaves of their own, three or more at once, are announced as the certificate-level leaf moves.)
    next.alertMemory = { ...next.alertMemory, renewing: { oldKey, newKey, previous: renewedFrom, oldNotBefore: previous.details.notBefore } };
  } else {
    // Announced now; a renewal still pending is told by this one.
    announceRenewal(state, rotation, renewedFrom);
    next.alertMemory = withoutRenewing(next.alertMemory);
  }
  next.alertedThreshold = null;
  next.expiryAlerted = false;
}

/**
 * A pending renewal's old leaf is gone while the certificate-level leaf stayed (or moved by
 * silence): announced now if that leaf was issued after the old one (not a forgotten node's older
 * leaf; without the old one's issue, if it outlives it), unless it was announced renewed already.
 */
function announceReplaced(state: CheckState<AnsweredOutcome>, rotation: Rotation): void {
  const { next } = state;
  const { replaced, replacedIssuedAt } = rotation;
  if (replaced && (replacedIssuedAt !== undefined ? next.details.notBefore > replacedIssuedAt : next.details.notAfter > Date.parse(replaced.expiresAt))) announceRenewal(state, rotation, replaced);
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
