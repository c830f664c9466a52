/** Channel and event schemas: request bodies and resources, for validation, types and OpenAPI. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, PageQuery, Timestamp } from "./common.ts";
import { CHANNEL_TYPES } from "../base/records.ts";
import { Filter } from "./channel_filter.ts";

export const ChannelName = Type.String({ minLength: 1, maxLength: 100, examples: ["Ops on call"] });

export const EmailConfig = Type.Object(
  {
    email: Type.String({
      // idn-email: internationalised addresses (RFC 6531) are accepted, as the server does.
      format: "idn-email",
      description: "The address notifications go to; internationalised addresses are accepted",
      examples: ["ops@example.com"],
    }),
  },
  { title: "Email config", additionalProperties: false },
);
export const ChatConfig = Type.Object(
  { webhookUrl: Type.String({ description: "https URL of a Discord or Slack incoming webhook", examples: ["https://discord.com/api/webhooks/123/abc"] }) },
  { title: "Discord or Slack config", additionalProperties: false },
);
export const WebhookConfig = Type.Object(
  {
    url: Type.String({ description: "http or https URL", examples: ["https://example.com/hooks/certkeeper"] }),
    headers: Type.Optional(
      Type.Record(Type.String(), Type.String(), {
        description: "Sent with every delivery; not Host, Content-Length, Transfer-Encoding, Connection or webhook-*",
        examples: [{ Authorization: "Bearer s3cr3t" }],
      }),
    ),
  },
  { title: "Webhook config", additionalProperties: false },
);

export const PagerDutyConfig = Type.Object(
  { routingKey: Type.String({ minLength: 32, maxLength: 32, description: "The Events API v2 integration key; shown as ******** after creation" }) },
  { title: "PagerDuty config", additionalProperties: false },
);
export const TeamsConfig = Type.Object(
  { webhookUrl: Type.String({ description: "https URL of a Teams workflow webhook; its last path segment and query are shown as ******** after creation" }) },
  { title: "Microsoft Teams config", additionalProperties: false },
);
export const TelegramConfig = Type.Object(
  {
    botToken: Type.String({ description: "The bot's token from BotFather; shown as ******** after creation", examples: ["123456789:AAE…"] }),
    chatId: Type.Union([Type.Integer(), Type.String()], { description: "A chat id, or a public channel's @username", examples: [-1001234567890] }),
  },
  { title: "Telegram config", additionalProperties: false },
);

const ChannelConfig = Type.Union([EmailConfig, ChatConfig, WebhookConfig, PagerDutyConfig, TeamsConfig, TelegramConfig]);

export const ChannelTypeInput = Type.Union(
  [...CHANNEL_TYPES, "the service"].map((type) => Type.Literal(type)),
  {
    description:
      "email, discord (\"the service\" is accepted as another spelling of discord, and stored as discord), slack, webhook, pagerduty, teams or telegram",
    examples: ["webhook"],
  },
);

export const AddChannelBody = Type.Object(
  { type: ChannelTypeInput, name: ChannelName, config: ChannelConfig, filter: Type.Optional(Type.Union([Filter, Type.Null()])) },
  { additionalProperties: false },
);

export const PatchChannelBody = Type.Object(
  {
    name: Type.Optional(ChannelName),
    enabled: Type.Optional(Type.Boolean()),
    config: Type.Optional(
      Type.Union([EmailConfig, ChatConfig, WebhookConfig, PagerDutyConfig, TeamsConfig, TelegramConfig], {
        description: "Replaces the config, validated for the channel's type; a masked value (********) sent back keeps the stored one",
      }),
    ),
    filter: Type.Optional(Type.Union([Filter, Type.Null()], { description: "Replaces the filter; null removes it" })),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchChannelBody = Static<typeof PatchChannelBody>;

export const ChannelHealth = Type.Object(
  {
    lastDeliveryAt: Type.Union([Timestamp, Type.Null()], { description: "When the last delivery attempt (a test included) ended; null: never" }),
    lastStatus: Type.Union([Type.Literal("delivered"), Type.Literal("failed"), Type.Literal("pending"), Type.Null()], {
      description: "Its delivery's status after that attempt: delivered, pending (it failed and will be tried again) or failed (for good)",
    }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: "Why that attempt failed; null after a delivery" }),
    failingSince: Type.Union([Timestamp, Type.Null()], {
      description: "The first failed attempt since the last delivery; null while deliveries succeed",
    }),
  },
  { additionalProperties: false, description: "How the channel's deliveries went lately" },
);

export const Channel = Type.Object(
  {
    id: Id("ch", "ch_9aK2mQ7xLp3VtB8nR1cZ"),
    type: Type.Union(CHANNEL_TYPES.map((type) => Type.Literal(type))),
    name: Type.String(),
    enabled: Type.Boolean(),
    config: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "As given, with header values, PagerDuty routing keys, Telegram bot tokens and a chat webhook URL's last path segment and query masked as ********; " +
        "a webhook channel's create response also carries signingSecret (whsec_…), shown that once",
    }),
    filter: Type.Union([Filter, Type.Null()], { description: "Which events the channel receives; null: every event" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    health: ChannelHealth,
  },
  { additionalProperties: false },
);
export type ChannelView = Static<typeof Channel>;

export const ChannelTestResult = Type.Object(
  {
    eventId: Id("evt", "evt_5tH8qW2kLm9XcV0bN3aZ"),
    channelId: Id("ch", "ch_9aK2mQ7xLp3VtB8nR1cZ"),
    status: Type.Union([Type.Literal("delivered"), Type.Literal("failed")]),
    responseStatus: Type.Union([Type.Integer(), Type.Null()], { description: "HTTP status of the endpoint; null for email or no response" }),
    error: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

export const ListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });

export const Delivery = Type.Object(
  {
    channelId: Type.String(),
    status: Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")]),
    attempts: Type.Integer({ minimum: 0 }),
    lastError: Type.Union([Type.String(), Type.Null()]),
  },
  { additionalProperties: false },
);

