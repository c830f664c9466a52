/** PATCH and DELETE /v1/watches/{id}. */
import { PatchWatchBody, Watch } from "../schemas/watch.ts";
import { DeleteResult, Envelope, IdParams } from "../schemas/common.ts";
import { isId } from "../base/ids.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { findWatch, presentWatch, watchNotFound } from "./_watches.ts";

export const patchWatch = defineOperation({
  id: "patchWatch",
  embed: "watches.update",
  method: "PATCH",
  path: "/v1/watches/:id",
  tag: "Watches",
  summary: "Change a watch's subdomains, autoMonitor or allowed issuers",
  access: "write",
  params: IdParams,
  query: NoQuery,
  body: PatchWatchBody,
  status: 200,
  response: Envelope(Watch),
  errors: ["permission_denied", "payload_too_large", "unsupported_media_type", "watch_not_found"],
  example: { request: { autoMonitor: true } },
  async handle({ principal, services }, { params, body }) {
    const patch = body as PatchWatchBody;
    const watch = await findWatch(services, principal.scope, params.id!);
    const updated = await services.store.watches.update(principal.scope, watch.id, { ...patch, updatedAt: services.clock.now() });
    if (!updated) throw watchNotFound(watch.id);
    return { data: presentWatch(updated) };
  },
});

export const deleteWatch = defineOperation({
  id: "deleteWatch",
  embed: "watches.delete",
  method: "DELETE",
  path: "/v1/watches/:id",
  tag: "Watches",
  summary: "Delete a watch",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(DeleteResult),
  errors: ["permission_denied", "watch_not_found"],
  async handle({ principal, services }, { params }) {
    const id = params.id!;
    const removed = isId("wch", id) && (await services.store.watches.remove(principal.scope, id));
    if (!removed) throw watchNotFound(id);
    return { data: { id, deleted: true } };
  },
});

export const pollWatch = defineOperation({
  id: "pollWatch",
  embed: "watches.poll",
  method: "POST",
  path: "/v1/watches/:id/poll",
  tag: "Watches",
  summary: "Poll a watch now",
  description:
    "Makes the watch due now: a server process asks the Certificate Transparency service at once (unless a poll of " +
    "it is already under way, or the service asked this watch to wait with a 429's or 503's Retry-After: then when that wait ends) and records the result in lastPolledAt and lastError, as a scheduled poll would. " +
    "Answers the watch as it is when asked; GET it again to see the result.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Watch),
  errors: ["permission_denied", "watch_not_found"],
  async handle({ principal, services }, { params }) {
    const id = params.id!;
    const watch = isId("wch", id) ? await services.store.watches.pollSoon(principal.scope, id, services.clock.now()) : null;
    if (!watch) throw watchNotFound(id);
    services.watches?.poke();
    return { data: presentWatch(watch) };
  },
});
