/** PATCH and DELETE /v1/channels/{id}. */
import { Type } from "@sinclair/typebox";
import { Channel, ChannelName, PatchChannelBody } from "../schemas/channel.ts";
import { DeleteResult, Envelope, IdParams } from "../schemas/common.ts";
import { checkTargetResolves, parseChannelConfig } from "../channels/channel_config.ts";
import { presentChannel } from "../channels/present.ts";
import { parseFilter } from "../channels/channel_filter.ts";
import type { ChannelFilter } from "../base/records.ts";
import { refuseNul, validate } from "../schemas/validate.ts";
import { isId } from "../base/ids.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { channelNotFound, findChannel } from "./_channels.ts";

const PatchChannelShape = Type.Object(
  {
    name: Type.Optional(ChannelName),
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(Type.Unknown()),
    filter: Type.Optional(Type.Unknown()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const patchChannel = defineOperation({
  id: "patchChannel",
  embed: "channels.update",
  method: "PATCH",
  path: "/v1/channels/:id",
  tag: "Channels",
  summary: "Change a channel's name, enabled flag, config or filter",
  description: "A config replaces the stored one; a masked value (********) sent back keeps what is stored.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  body: PatchChannelBody,
  // The config's shape depends on the channel's type: checked in the handler (invalid_config, like add).
  parseBody: (raw) => {
    // The config's NUL is its own error (invalid_config), as every other of its faults.
    if (typeof raw === "object" && raw !== null) refuseNul((raw as { config?: unknown }).config, { code: "invalid_config", field: "config" });
    const body = validate(PatchChannelShape, raw);
    return body.filter === undefined ? body : { ...body, filter: parseFilter(body.filter) };
  },
  status: 200,
  response: Envelope(Channel),
  errors: ["permission_denied", "payload_too_large", "unsupported_media_type", "channel_not_found", "invalid_config", "invalid_webhook_url"],
  example: { request: { enabled: false } },
  async handle({ principal, services }, { params, body }) {
    const patch = body as PatchChannelBody;
    const { store, clock, config } = services;
    const channel = await findChannel(services, principal.scope, params.id!);
    let newConfig: Record<string, unknown> | undefined;
    if (patch.config !== undefined) {
      newConfig = parseChannelConfig(channel.type, patch.config, { allowPrivateTargets: config.allowPrivateTargets, previous: channel.config });
      await checkTargetResolves(channel.type, newConfig, { rules: config.resolve, allowPrivateTargets: config.allowPrivateTargets });
    }
    const updated = await store.channels.update(principal.scope, channel.id, {
      name: patch.name,
      enabled: patch.enabled,
      config: newConfig,
      filter: patch.filter as ChannelFilter | null | undefined,
      updatedAt: clock.now(),
    });
    if (!updated) throw channelNotFound(channel.id);
    return { data: presentChannel(updated) };
  },
});

export const deleteChannel = defineOperation({
  id: "deleteChannel",
  embed: "channels.delete",
  method: "DELETE",
  path: "/v1/channels/:id",
  tag: "Channels",
  summary: "Delete a channel",
  description: "Its pending deliveries are cancelled.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(DeleteResult),
  errors: ["permission_denied", "channel_not_found"],
  async handle({ principal, services }, { params }) {
    const id = params.id!;
    const removed = isId("ch", id) && (await services.store.channels.remove(principal.scope, id, services.clock.now()));
    if (!removed) throw channelNotFound(id);
    return { data: { id, deleted: true } };
  },
});
