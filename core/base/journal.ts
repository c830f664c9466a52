/**
 * The log lines of what happened (CONTRACT §23), written where it happens: one `info` line per event
 * raised. Fields only, never a secret: an event's certificate is named by id and domain.
 */
import type { EventRecord } from "./records.ts";
import type { Logger } from "./log.ts";

/** One line per event: its kind, its certificate (or watch), its organization and mode. */
export function logEventsRaised(logger: Logger, events: readonly EventRecord[]): void {
  if (events.length === 0 || !logger.enabled("info")) return;
  for (const event of events) {
    const data = event.data as { certificate?: { domain?: unknown; port?: unknown }; threshold?: unknown; muted?: unknown; domain?: unknown; watchId?: unknown };
    const domain = typeof data.certificate?.domain === "string" ? data.certificate.domain : typeof data.domain === "string" ? data.domain : undefined;
    logger.info("event raised", {
      eventId: event.id,
      type: event.type,
      certificateId: event.certificateId,
      ...(domain ? { domain } : {}),
      ...(typeof data.certificate?.port === "number" ? { port: data.certificate.port } : {}),
      ...(typeof data.threshold === "number" ? { threshold: data.threshold } : {}),
      ...(typeof data.watchId === "string" ? { watchId: data.watchId } : {}),
      ...(data.muted === true ? { muted: true } : {}),
      organizationId: event.organizationId,
      mode: event.mode,
    });
  }
}
