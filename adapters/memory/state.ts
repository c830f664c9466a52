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

export class MemoryState {
  organizations = new Map<string, OrganizationRecord>();
  users = new Map<string, UserRecord>();
  apiKeys = new Map<string, ApiKeyRecord>();
  certificates = new Map<string, CertificateRecord & { leaseOwner: string | null }>();
  channels = new Map<string, ChannelRecord>();
  events = new Map<string, EventRecord & { seq: number }>();
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
  revocations = new Map<string, RevocationAnswer>();
  seq = 0;
  writes = 0;

  /** Records the start of a write, for the change token. */
  write(): void {
    this.writes++;
  }

  /** Inserts events with a pending delivery to every channel routeEvent gives each. */
  addEvents(events: EventRecord[]): void {
    for (const event of events) {
      this.events.set(event.id, storedEvent(event, ++this.seq));
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

  cancelDeliveries(match: (d: DeliveryRecord) => boolean, reason: string, at: number): void {
    for (const key of this.pending) {
      const delivery = this.deliveries.get(key)!;
      if (match(delivery)) {
        Object.assign(delivery, { status: "failed", lastError: reason, updatedAt: at, leaseOwner: null });
        this.pending.delete(key);
      }
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
 * A certificate record's copy. Its details (the parsed certificate, the largest part) are frozen and
 * shared rather than cloned: they are replaced whole, never changed, and a check copies them often.
 */
export function copyCertificate<T extends CertificateRecord>(record: T): T {
  return {
    ...record,
    alertThresholds: [...record.alertThresholds],
    tags: [...record.tags],
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
  return deepFreeze({ ...copy(event), seq });
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/** Drops store-private fields. */
export function withoutLease<T extends { leaseOwner: string | null }>(value: T): Omit<T, "leaseOwner"> {
  const { leaseOwner: _, ...rest } = value;
  return copy(rest);
}
