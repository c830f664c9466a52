/** Certificate Transparency watch schemas: written once for validation, types and OpenAPI. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, PageQuery, Timestamp } from "./common.ts";

// No control characters: an issuer's name is one line (the console edits the list one name per line).
export const AllowedIssuers = Type.Array(Type.String({ minLength: 1, maxLength: 200, pattern: "^[^\\u0000-\\u001f\\u007f]+$" }), {
  maxItems: 20,
  description:
    "Issuers you expect: an issuance is authorized when its issuer's organization (O), common name (CN) or " +
    "friendly name equals one of them, ignoring case. Empty: authorizedIssuer is null.",
  examples: [["Let's Encrypt", "DigiCert Inc"]],
});

export const AddWatchBody = Type.Object(
  {
    domain: Type.String({ description: "Domain to watch in Certificate Transparency, as certificates' domains are given", examples: ["example.com"] }),
    includeSubdomains: Type.Optional(Type.Boolean({ description: "Also certificates for names under the domain; default true" })),
    autoMonitor: Type.Optional(
      Type.Boolean({ description: "Add every currently valid name found (port 443) as POST /v1/certificates would; default false" }),
    ),
    allowedIssuers: Type.Optional(AllowedIssuers),
  },
  { additionalProperties: false },
);
export type AddWatchBody = Static<typeof AddWatchBody>;

export const PatchWatchBody = Type.Object(
  {
    includeSubdomains: Type.Optional(Type.Boolean()),
    autoMonitor: Type.Optional(Type.Boolean()),
    allowedIssuers: Type.Optional(AllowedIssuers),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchWatchBody = Static<typeof PatchWatchBody>;

export const Watch = Type.Object(
  {
    id: Id("wch", "wch_2bV8nQ4kLm9XpT1cR7dZ"),
    domain: Type.String({ examples: ["example.com"] }),
    includeSubdomains: Type.Boolean(),
    autoMonitor: Type.Boolean(),
    allowedIssuers: Type.Array(Type.String()),
    lastPolledAt: Type.Union([Timestamp, Type.Null()], { description: "When the last poll ended; null before the first" }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: "Why the last poll failed or a name could not be monitored; null after a clean poll" }),
    issuancesSeen: Type.Integer({ description: "Issuances recorded so far, the first poll's included" }),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { additionalProperties: false },
);
export type WatchView = Static<typeof Watch>;

export const ListWatchesQuery = Type.Object({ ...PageQuery }, { additionalProperties: false });
