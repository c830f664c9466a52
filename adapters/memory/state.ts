/** The tables of the in-memory store. */
import type {
  ApiKeyRecord,
  CertificateRecord,
  ChannelRecord,
  DeliveryRecord,
  EventRecord,
  OrganizationRecord,
  Scope,
  UserRecord,
} from "../../core/model.ts";

export class MemoryState {
  organizations = new Map<string, OrganizationRecord>();
  users = new Map<string, UserRecord>();
  apiKeys = new Map<string, ApiKeyRecord>();
  certificates = new Map<string, CertificateRecord & { leaseOwner: string | null }>();
  channels = new Map<string, ChannelRecord>();
  events = new Map<string, EventRecord & { seq: number }>();
  /** Keyed by `${eventId} ${channelId}`. */
  deliveries = new Map<string, DeliveryRecord & { leaseOwner: string | null }>();
  rateLimits = new Map<string, { windowStart: number; count: number }>();
  seq = 0;
  writes = 0;

  /** Records the start of a write, for the change token. */
  write(): void {
    this.writes++;
  }

  /** Inserts events with a pending delivery to every enabled channel of their scope. */
  addEvents(events: EventRecord[]): void {
    for (const event of events) {
      this.events.set(event.id, { ...copy(event), seq: ++this.seq });
      for (const channel of this.channels.values()) {
        if (inScope(channel, event) && channel.enabled) {
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

  cancelDeliveries(match: (d: DeliveryRecord) => boolean, reason: string, at: number): void {
    for (const delivery of this.deliveries.values()) {
      if (delivery.status === "pending" && match(delivery)) {
        Object.assign(delivery, { status: "failed", lastError: reason, updatedAt: at, leaseOwner: null });
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

/** Drops store-private fields. */
export function withoutLease<T extends { leaseOwner: string | null }>(value: T): Omit<T, "leaseOwner"> {
  const { leaseOwner: _, ...rest } = value;
  return copy(rest);
}
