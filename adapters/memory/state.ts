/** The tables of the in-memory store. */
import type {
  ApiKeyRecord,
  CertificateRecord,
  ChannelRecord,
  DeliveryRecord,
  EventRecord,
  OrganizationRecord,
  Scope,
  SessionRecord,
  SignInFailures,
  UserRecord,
  RevocationAnswer,
  WatchRecord,
} from "../../core/base/mod.ts";
import { routeEvent } from "../../core/channels/mod.ts";
import { leafNamesKey } from "../../core/deployment/mod.ts";

export class MemoryState {
  organizations = new Map<string, OrganizationRecord>();
  users = new Map<string, UserRecord>();
  apiKeys = new Map<string, ApiKeyRecord>();
  certificates = new Map<string, CertificateRecord & { leaseOwner: string | null }>();
  /** The last word of each process running checks (CertificateStore.beat). */
  beats = new Map<string, number>();
  channels = new Map<string, ChannelRecord>();
  events = new Map<string, EventRecord & { seq: number }>();
  /**
   * The stored events in the order of their seq (each appended as it is stored, pruned ones dropped at
   * each prune): a page of the event list is read backwards from its cursor instead of sorting every
   * event for each page.
   */
  eventsBySeq: Array<EventRecord & { seq: number }> = [];
  /** Keyed by `${eventId} ${channelId}`. */
  deliveries = new Map<string, DeliveryRecord & { leaseOwner: string | null }>();
  /** Keys of pending deliveries: the outbox is read often and is a small part of all deliveries. */
  pending = new Set<string>();
  /** Delivery keys by event id, for listing events with their deliveries. */
  deliveriesByEvent = new Map<string, string[]>();
  rateLimits = new Map<string, { windowStart: number; count: number }>();
  sessions = new Map<string, SessionRecord>();
  signInAttempts = new Map<string, SignInFailures>();
  watches = new Map<string, WatchRecord & { leaseOwner: string | null }>();
  /**
   * Certificate ids by the names key of the leaf each serves (core/deployment): an issuance finds the
   * certificates it concerns without reading every one (the SQL store has a column and an index).
   */
  #idsByNames = new Map<string, Set<string>>();
  #namesOf = new Map<string, string>();

  /** Files a certificate under its leaf's names key; call whenever its details may have changed. */
  indexNames(record: CertificateRecord): void {
    const key = leafNamesKey(record.details);
    const before = this.#namesOf.get(record.id);
    if (before === key) return;
    if (before !== undefined) this.unindexNames(record.id);
    this.#namesOf.set(record.id, key);
    let ids = this.#idsByNames.get(key);
    if (!ids) this.#idsByNames.set(key, (ids = new Set()));
    ids.add(record.id);
  }

  unindexNames(id: string): void {
    const key = this.#namesOf.get(id);
    if (key === undefined) return;
    this.#namesOf.delete(id);
    const ids = this.#idsByNames.get(key)!;
    ids.delete(id);
    if (ids.size === 0) this.#idsByNames.delete(key);
  }

  /** The ids of the certificates whose leaf has exactly these names. */
  idsWithNames(key: string): readonly string[] {
    return [...(this.#idsByNames.get(key) ?? [])];
  }
  revocations = new Map<string, RevocationAnswer>();
  seq = 0;
  writes = 0;

  /** Records the start of a write, for the change token. */
  write(): void {
    this.writes++;
  }

  /** Stores an event with the next seq. */
  putEvent(event: EventRecord): void {
    const stored = storedEvent(event, ++this.seq);
    this.events.set(event.id, stored);
    this.eventsBySeq.push(stored);
  }

  /** Inserts events with a pending delivery to every channel routeEvent gives each. */
  addEvents(events: EventRecord[]): void {
    for (const event of events) {
      this.putEvent(event);
      for (const channel of routeEvent(event, this.channels.values())) {
        {
          this.indexDelivery(event.id, channel.id, "pending");
          this.deliveries.set(`${event.id} ${channel.id}`, {
            eventId: event.id,
            channelId: channel.id,
            status: "pending",
            attempts: 0,
            nextAttemptAt: event.createdAt,
            lastError: null,
            updatedAt: event.createdAt,
            leaseOwner: null,
          });
        }
      }
    }
  }

  /** Records a new delivery's key in the indexes. */
  indexDelivery(eventId: string, channelId: string, status: DeliveryRecord["status"]): void {
    const key = `${eventId} ${channelId}`;
    if (status === "pending") this.pending.add(key);
    this.deliveriesByEvent.set(eventId, [...(this.deliveriesByEvent.get(eventId) ?? []), key]);
  }

  cancelDeliveries(match: (d: DeliveryRecord & { leaseOwner: string | null }) => boolean, reason: string, at: number): void {
    const channels = new Set<string>();
    for (const key of this.pending) {
      const delivery = this.deliveries.get(key)!;
      if (match(delivery)) {
        Object.assign(delivery, { status: "failed", lastError: reason, updatedAt: at, leaseOwner: null });
        this.pending.delete(key);
        if (delivery.attempts > 0) channels.add(delivery.channelId);
      }
    }
    this.settleHealth(channels);
  }

  /**
   * After a tried delivery of each channel in `channelIds` was cancelled: a channel whose health says
   * `pending` (a failed attempt to be made again) while none of its tried deliveries is still pending
   * says `failed`, as the delivery its last attempt was for now is (the SQL store's settleHealthStatement).
   */
  settleHealth(channelIds: Iterable<string>): void {
    for (const id of channelIds) {
      const channel = this.channels.get(id);
      if (!channel?.health || channel.health.lastStatus !== "pending") continue;
      const retried = [...this.pending].some((key) => {
        const delivery = this.deliveries.get(key)!;
        return delivery.channelId === id && delivery.attempts > 0;
      });
      if (!retried) channel.health = { ...channel.health, lastStatus: "failed" };
    }
  }
}

export function inScope(record: Scope, scope: Scope): boolean {
  return record.organizationId === scope.organizationId && record.mode === scope.mode;
}

/** A deep copy, so no caller can change stored state by holding on to a record. */
export function copy<T>(value: T): T {
  return structuredClone(value);
}

/**
 * A deep copy of what the SQL store keeps as JSON text (an event, a channel): a JSON round trip, as
 * that store makes, about five times faster than a structured clone (measured on an event carrying a
 * certificate: 24 µs against 123).
 */
export function copyJson<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

/**
 * A certificate record's copy, without the store's lease. Its details (the parsed certificate, the
 * largest part) and the other parts a check replaces whole are frozen and shared rather than cloned:
 * they are never changed in place, and a check copies them often.
 */
export function copyCertificate(record: CertificateRecord & { leaseOwner?: string | null }): CertificateRecord {
  return Object.assign(readCertificate(record), sharedParts(record));
}

/**
 * A stored certificate record as read: its own copy, sharing the parts a check replaces whole, which
 * every write froze (insert and saveCheck through {@link sharedParts}, noteIssuance its deployment).
 */
export function readCertificate(record: CertificateRecord & { leaseOwner?: string | null }): CertificateRecord {
  const { leaseOwner: _, ...copied } = record;
  copied.alertThresholds = [...record.alertThresholds];
  copied.tags = [...record.tags];
  return copied;
}

/** The parts of a certificate record a check replaces whole, frozen to be shared. */
export function sharedParts(record: CertificateRecord): Pick<CertificateRecord, "details" | "endpoints" | "alertMemory" | "tls" | "deployment" | "dns"> {
  return {
    details: deepFreeze(record.details),
    endpoints: deepFreeze(record.endpoints),
    alertMemory: deepFreeze(record.alertMemory),
    tls: deepFreeze(record.tls),
    deployment: deepFreeze(record.deployment ?? null),
    ...(record.dns !== undefined ? { dns: deepFreeze(record.dns) } : {}),
  };
}

/**
 * An event as kept: copied once and frozen, then shared by every read (an event never changes once
 * written; a busy simulation read each one several times, a structured clone each).
 */
export function storedEvent(event: EventRecord, seq: number): EventRecord & { seq: number } {
  return deepFreeze({ ...copyJson(event), seq });
}

/**
 * Freezes `value`'s objects, as core/store's read cache does (its `freeze`): a mutation of what is
 * shared fails loudly instead of spreading. Arrays, and what they hold, are left as they are, as there:
 * the engine reads a frozen array about ten times slower (measured: 25 ns an element against 2.3), and
 * serialises frozen objects inside arrays on a slow path (freezing them too made the simulated year a
 * third slower). Core never changes a record's arrays in place; it replaces them.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Array.isArray(value) && !deepFrozen.has(value)) {
    deepFrozen.add(value);
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Objects already frozen here, with what they hold: asking the engine whether one is frozen walks its properties. */
const deepFrozen = new WeakSet<object>();

/** Drops store-private fields. */
export function withoutLease<T extends { leaseOwner: string | null }>(value: T): Omit<T, "leaseOwner"> {
  const { leaseOwner: _, ...rest } = value;
  return copy(rest);
}
