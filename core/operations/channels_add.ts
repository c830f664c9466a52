/** POST /v1/channels: validate in CONTRACT §6's order, store, answer (a webhook's signing secret, once). */
import { CertkeeperError } from "../base/errors.ts";
import { Type } from "@sinclair/typebox";
import { newId } from "../base/ids.ts";
import { rejectUnknownFields, validate } from "../schemas/validate.ts";
import { AddChannelBody, Channel, ChannelName } from "../schemas/channel.ts";
import { Envelope } from "../schemas/common.ts";
import { checkTargetResolves, parseChannelConfig, parseChannelType } from "../channels/channel_config.ts";
import { presentChannel } from "../channels/present.ts";
import { newSigningSecret } from "../notify/webhook_signature.ts";
import type { ChannelFilter, ChannelRecord, ChannelType } from "../base/records.ts";
import { parseFilter } from "../channels/channel_filter.ts";
import type { Services } from "./services.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { limitMessage } from "../certificates/add_rules.ts";

/** Validated as a field of an object, so the message names it. */
const NameOnly = Type.Object({ name: ChannelName });

interface AddChannelInput {
  type: ChannelType;
  name: string;
  config: Record<string, unknown>;
  filter: ChannelFilter | null;
}

/** Unknown fields, then the type (before any config error), then the name, then the config. */
function parseAddChannel(raw: unknown, services: Services): AddChannelInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CertkeeperError("invalid_request", "The request body must be a JSON object with type, name and config.");
  }
  const body = raw as Record<string, unknown>;
  rejectUnknownFields(AddChannelBody, body);
  const type = parseChannelType(body.type);
  // Absent is absent (named as missing), not a value of the wrong type.
  const { name } = validate(NameOnly, body.name === undefined ? {} : { name: body.name });
  const config = parseChannelConfig(type, body.config, { allowPrivateTargets: services.config.allowPrivateTargets });
  return { type, name, config, filter: parseFilter(body.filter) ?? null };
}

export const addChannel = defineOperation({
  id: "addChannel",
  embed: "channels.add",
  method: "POST",
  path: "/v1/channels",
  tag: "Channels",
  summary: "Add a notification channel",
  description:
    "Types: email, discord (the spelling \"the service\" is accepted and stored as discord), slack, webhook, pagerduty, teams, telegram. " +
    "An optional filter routes to the channel only some event kinds, or only events of certificates with some tags. " +
    "A webhook channel's create response carries config.signingSecret (whsec_…) for verifying signatures: it is shown this once.",
  access: "write",
  query: NoQuery,
  body: AddChannelBody,
  parseBody: parseAddChannel,
  status: 201,
  response: Envelope(Channel),
  errors: [
    "permission_denied",
    "payload_too_large",
    "unsupported_media_type",
    "invalid_channel_type",
    "invalid_config",
    "invalid_webhook_url",
    "channel_limit_reached",
  ],
  example: {
    request: { type: "webhook", name: "Incident bot", config: { url: "https://example.com/hooks/certkeeper", headers: { Authorization: "Bearer s3cr3t" } } },
  },
  async handle({ principal, services }, { body }) {
    const input = body as AddChannelInput;
    const { store, clock, config } = services;
    await checkTargetResolves(input.type, input.config, { rules: config.resolve, allowPrivateTargets: config.allowPrivateTargets });
    const now = clock.now();
    const record: ChannelRecord = {
      ...principal.scope,
      id: newId("ch"),
      type: input.type,
      name: input.name,
      enabled: true,
      config: input.config,
      signingSecret: input.type === "webhook" ? newSigningSecret() : null,
      filter: input.filter,
      createdAt: now,
      updatedAt: now,
    };
    if (!(await store.channels.insert(record, { limit: principal.limits.channels }))) {
      const { organizationId } = principal.scope;
      throw new CertkeeperError("channel_limit_reached", limitMessage({ limit: principal.limits.channels, what: "channels", flag: "channel-limit", organizationId }));
    }
    const view = presentChannel(record);
    if (record.signingSecret) view.config = { ...view.config, signingSecret: record.signingSecret };
    return { data: view };
  },
});
