/**
 * A certificate's alert memory (AlertMemory): the leaves and chain certificates whose alerts were
 * announced, the nodes fallen silent and the leaves they are presumed to serve, the leaves served
 * lately, and the bounds that keep each list small.
 */
import type { AlertMemory, CertificateDetails, CertificateRecord, SilentLeaf } from "../base/records.ts";
import { DAY } from "../base/time.ts";
import { renewalDeadline } from "../renewal/mod.ts";

/**
 * Most certificates (leaves, or chain certificates) whose announced alerts are remembered. A node
 * that keeps an expired leaf and falls silent for days, while the others renew 24-hour certificates
 * twice a day, comes back after a dozen leaves or more: its leaf's alerts must still be remembered then.
 */
export const MEMORY_SIZE = 32;
/** Leaves kept in alertMemory.servedLately: more than a name's nodes serve at once in a rollout. */
const SERVED_LATELY_SIZE = 8;
/** Leaves remembered as served at the last renewal announced (AlertMemory.generation). */
export const GENERATION_SIZE = 16;
/**
 * Most revoked serials remembered as announced. Revocation is announced at most once per serial
 * (CONTRACT §14), so this is far above any real rotation; it only bounds what a hostile CA could grow.
 */
export const REVOKED_MEMORY_SIZE = 256;
/** Serials (and `serial@windowEnd` requests) remembered as announced: far above any real rotation. */
export const RENEWAL_MEMORY_SIZE = 64;
/** Most `serial|CAA set` pairs remembered as announced by `certificate.renewal_blocked`. */
export const RENEWAL_BLOCKED_MEMORY_SIZE = 32;

export const EMPTY_ALERT_MEMORY: AlertMemory = { leaves: [], chain: [] };

/**
 * `serial@notAfter`, the key a leaf is remembered by. Built only when needed: a check compares leaves
 * with {@link sameLeaf} and {@link isLeafKeyOf}, which look at the expiry first (building a key and
 * comparing it was a tenth of the simulated year's time).
 */
export function leafKey(details: CertificateDetails): string {
  return `${details.serialNumber}@${details.notAfter}`;
}

/** The same leaf: what {@link leafKey} would say, without building the keys. */
export function sameLeaf(a: CertificateDetails, b: CertificateDetails): boolean {
  return a === b || (a.notAfter === b.notAfter && a.serialNumber === b.serialNumber);
}

/** Whether `key` (remembered with its leaf's `notAfter`) names the leaf `details`. */
export function isLeafKeyOf(entry: { key: string; notAfter: number }, details: CertificateDetails): boolean {
  return entry.notAfter === details.notAfter && entry.key === leafKey(details);
}

/**
 * Whether a silent node is presumed to serve the leaf `key` still: it served it at its last answer,
 * and has been silent for less than a day (a tenth of the leaf's lifetime, when shorter). A node
 * silent longer holds no renewal up: it may be gone for good while the name still lists it
 * (`howeverLong`: a renewal marked untilBack waits for it all the same).
 */
export function presumedServed(memory: AlertMemory, key: string, now: number, howeverLong = false): boolean {
  return (memory.silent ?? []).some((leaf) => leaf.key === key && (howeverLong || now - leaf.since < Math.min(DAY, (leaf.notAfter - leaf.notBefore) / 10)));
}

export function withoutRenewing(memory: AlertMemory): AlertMemory {
  const { renewing: _, ...rest } = memory;
  return rest;
}

export function withoutCovered(memory: AlertMemory): AlertMemory {
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
export function rememberSilentNodes(previous: CertificateRecord, next: CertificateRecord, unresolved: boolean, now: number): void {
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
export function noteServedLately(record: CertificateRecord, leaves: readonly CertificateDetails[]): void {
  const known = record.alertMemory.servedLately ?? [];
  let list = known;
  for (const leaf of leaves) {
    const key = leafKey(leaf);
    const { deadline } = renewalDeadline(leaf);
    if (list.some((entry) => entry.key === key && entry.deadline === deadline && entry.notAfter !== undefined)) continue;
    list = [{ key, notBefore: leaf.notBefore, notAfter: leaf.notAfter, deadline }, ...list.filter((entry) => entry.key !== key)];
  }
  if (list === known) return;
  const servedLately = list.sort((a, b) => b.notBefore - a.notBefore).slice(0, SERVED_LATELY_SIZE);
  record.alertMemory = { ...record.alertMemory, servedLately };
}

/** `entry` first (replacing an older entry with its key), then the most recent others, MEMORY_SIZE at most. */
export function remember<T>(list: readonly T[], entry: T, key: (item: T) => string): T[] {
  return [entry, ...list.filter((item) => key(item) !== key(entry))].slice(0, MEMORY_SIZE);
}
