/** GET /v1/watches and GET /v1/watches/{id}. */
import { ListWatchesQuery, Watch } from "../schemas/watch.ts";
import { Envelope, IdParams, ListEnvelope } from "../schemas/common.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { listPages, pageLimit } from "./_page.ts";
import { findWatch, presentWatch } from "./_watches.ts";

export const listWatches = defineOperation({
  id: "listWatches",
  embed: "watches.list",
  method: "GET",
  path: "/v1/watches",
  tag: "Watches",
  summary: "List watches",
  description: "Newest first, cursor-paginated.",
  access: "read",
  query: ListWatchesQuery,
  status: 200,
  response: ListEnvelope(Watch),
  errors: [],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const pages = listPages("watches", query, principal.scope);
    const before = pages.position(query.cursor, ["number", "string"]);
    const watches = await services.store.watches.list(principal.scope, {
      limit: limit + 1,
      before: before && { createdAt: before[0] as number, id: before[1] as string },
    });
    const { page, nextCursor } = pages.paginate(watches, limit, (w) => [w.createdAt, w.id]);
    return { data: page.map(presentWatch), nextCursor };
  },
});

export const getWatch = defineOperation({
  id: "getWatch",
  embed: "watches.get",
  method: "GET",
  path: "/v1/watches/:id",
  tag: "Watches",
  summary: "Get a watch",
  access: "read",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Watch),
  errors: ["watch_not_found"],
  async handle({ principal, services }, { params }) {
    return { data: presentWatch(await findWatch(services, principal.scope, params.id!)) };
  },
});
