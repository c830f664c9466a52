/** The schema of a channel's filter (CONTRACT §16): which event kinds and tags it receives. */
import { Type } from "@sinclair/typebox";
import { EVENT_TYPES } from "../base/records.ts";
import { Tag } from "./tags.ts";

export const EventKind = Type.Union(
  EVENT_TYPES.map((type) => Type.Literal(type)),
  { description: "An event kind" },
);

export const Filter = Type.Object(
  {
    events: Type.Optional(
      Type.Array(EventKind, { minItems: 1, maxItems: EVENT_TYPES.length, uniqueItems: true, description: "Event kinds this channel receives" }),
    ),
    tags: Type.Optional(
      Type.Array(Tag, { minItems: 1, maxItems: 20, uniqueItems: true, description: "The channel receives events of certificates carrying at least one of these" }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Which events the channel receives: absent or null, every event; test events ignore it. An event without a certificate " +
      "(certificate.issued) matches only filters without tags.",
    examples: [{ events: ["certificate.expiring", "certificate.expired"], tags: ["team:payments"] }],
  },
);
