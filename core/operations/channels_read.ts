/** GET /v1/channels and GET /v1/channels/{id}. */
import { Channel, ListQuery } from "../schemas/channel.ts";
import { Envelope, IdParams, ListEnvelope } from "../schemas/common.ts";
import { presentChannel } from "../channels/present.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { listPages, pageLimit } from "./_page.ts";
import { findChannel } from "./_channels.ts";

export const listChannels = defineOperation({
  id: "listChannels",
  embed: "channels.list",
  method: "GET",
  path: "/v1/channels",
  tag: "Channels",
  summary: "List channels",
  description: "Newest first, cursor-paginated.",
  access: "read",
  query: ListQuery,
  status: 200,
  response: ListEnvelope(Channel),
  errors: [],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const pages = listPages("channels", query, principal.scope);
    const before = pages.position(query.cursor, ["number", "string"]);
    const channels = await services.store.channels.list(principal.scope, {
      limit: limit + 1,
      before: before && { createdAt: before[0] as number, id: before[1] as string },
    });
    const { page, nextCursor } = pages.paginate(channels, limit, (c) => [c.createdAt, c.id]);
    return { data: page.map(presentChannel), nextCursor };
  },
});

export const getChannel = defineOperation({
  id: "getChannel",
  embed: "channels.get",
  method: "GET",
  path: "/v1/channels/:id",
  tag: "Channels",
  summary: "Get a channel",
  access: "read",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Channel),
  errors: ["channel_not_found"],
  async handle({ principal, services }, { params }) {
    return { data: presentChannel(await findChannel(services, principal.scope, params.id!)) };
  },
});
