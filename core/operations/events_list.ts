/** GET /v1/events: recent events, newest first, with their deliveries. */
import { Event, ListQuery } from "../schemas/channel.ts";
import { ListEnvelope } from "../schemas/common.ts";
import { CertkeeperError } from "../base/errors.ts";
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
  errors: ["invalid_request"],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const before = typeof query.cursor === "string" ? decodeCursor(query.cursor, ["string"]) : undefined;
    // The cursor names the page's last event, not its seq: a seq counts every organization's events.
    const beforeId = before?.[0] as string | undefined;
    const events = await services.store.events.list(principal.scope, { limit: limit + 1, beforeId });
    // An empty page after a cursor naming no event of this scope (made up, or removed by retention
    // since) is no end of the list: the place is lost, and the client is told so.
    if (beforeId !== undefined && events.length === 0 && !(await services.store.events.get(principal.scope, beforeId))) {
      throw new CertkeeperError(
        "invalid_request",
        "The cursor names no event of yours (it may have been removed since, by CERTKEEPER_EVENT_RETENTION): list again from the newest, without a cursor.",
      );
    }
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
