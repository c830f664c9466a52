/** The CT logs the follower reads (CONTRACT §21): written once for validation, types and OpenAPI. */
import { Type, type Static } from "@sinclair/typebox";
import { Timestamp } from "./common.ts";

export const CtLog = Type.Object(
  {
    url: Type.String({ description: "Where the log's entries are read: its RFC 6962 URL, or a tile log's monitoring URL", examples: ["https://sycamore2026h1.ct.letsencrypt.org/"] }),
    kind: Type.Union([Type.Literal("rfc6962"), Type.Literal("tiled")], { description: "rfc6962 (get-sth, get-entries) or tiled (static-ct-api)" }),
    treeSize: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: "Size of the newest head whose signature verified; null before the first" }),
    position: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: "Entries before it are verified and matched; null until the log is first read (it is then followed from its size)",
    }),
    lastError: Type.Union([Type.String(), Type.Null()], {
      description: "Why the log is skipped now (a head or entries that do not verify, a shrinking tree, a failing or slow log); null while it is followed",
    }),
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type CtLogView = Static<typeof CtLog>;
