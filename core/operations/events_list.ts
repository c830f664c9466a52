/** GET /v1/events: recent events, newest first, with their deliveries. */
import { Event, ListQuery } from "../schemas/channel.ts";
import { ListEnvelope } from "../schemas/common.ts";
import { iso } from "../base/time.ts";
import type { EventWithDeliveries } from "../store/ports.ts";
import { defineOperation } from "./operation.ts";
import { decodeCursor, pageLimit, paginate } from "./_page.ts";

export const listEvents = defineOperation({
  id: "listEvents",
  embed: "events.list",
  method: "GET",
  path: "/v1/events",
  tag: "Events",
  summary: "List recent events with their deliveries",
  description: "Newest first, cursor-paginated. Each delivery shows its status (pending, delivered, failed), attempts and last error.",
  access: "read",
  query: ListQuery,
  status: 200,
  response: ListEnvelope(Event),
  errors: [],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const before = typeof query.cursor === "string" ? decodeCursor(query.cursor, ["string"]) : undefined;
    // The cursor names the page's last event, not its seq: a seq counts every organization's events.
    const events = await services.store.events.list(principal.scope, { limit: limit + 1, beforeId: before?.[0] as string | undefined });
    const { page, nextCursor } = paginate(events, limit, (e) => [e.id]);
    return { data: page.map(presentEvent), nextCursor };
  },
});

export function presentEvent(event: EventWithDeliveries) {
  return {
    id: event.id,
    type: event.type,
    createdAt: iso(event.createdAt),
    certificateId: event.certificateId,
    data: event.data,
    deliveries: event.deliveries.map((d) => ({ channelId: d.channelId, status: d.status, attempts: d.attempts, lastError: d.lastError })),
  };
}
