/** GET /v1/events: recent events, newest first, with their deliveries. */
import { ListQuery } from "../schemas/channel.ts";
import { Event } from "../schemas/event.ts";
import { ListEnvelope } from "../schemas/common.ts";
import { iso } from "../base/time.ts";
import type { EventWithDeliveries } from "../store/ports.ts";
import { defineOperation } from "./operation.ts";
import { listPages, pageLimit } from "./_page.ts";

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
  errors: ["invalid_request"],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const pages = listPages("events", query, principal.scope);
    // The cursor names the page's last event and its time, not its seq: a seq counts every
    // organization's events, which a cursor must not tell. The time places the next page when that
    // event is gone (removed by retention since, while older ones with deliveries pending are kept).
    const before = pages.position(query.cursor, ["number", "string"]);
    const events = await services.store.events.list(principal.scope, {
      limit: limit + 1,
      ...(before ? { beforeId: before[1] as string, beforeCreatedAt: before[0] as number } : {}),
    });
    const { page, nextCursor } = pages.paginate(events, limit, (e) => [e.createdAt, e.id]);
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
