/** Import schemas (CONTRACT §16): the request body and the import resource. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, Timestamp } from "./common.ts";
import { AddCertificateBody } from "./certificate.ts";

export const MAX_IMPORT_ITEMS = 10_000;
/** Finished imports one organization keeps, with their items and results; older ones are deleted. */
export const FINISHED_IMPORTS_KEPT = 20;
/**
 * Imports one organization may have running at once (both modes together); one more is 429
 * `rate_limit_exceeded` until one finishes. With the finished ones kept, what an organization's imports
 * hold in the database is bounded (30 of 2 MiB at most), whatever its rate limit.
 */
export const MAX_RUNNING_IMPORTS = 10;
/** The Retry-After of that 429: an import of failing items finishes within seconds. */
export const RUNNING_IMPORTS_RETRY_SECONDS = 5;
/** Bodies up to and including 2 MiB on this route only. */
export const MAX_IMPORT_BODY_BYTES = 2 * 1024 * 1024;

export const ImportBody = Type.Object(
  {
    certificates: Type.Array(AddCertificateBody, {
      minItems: 1,
      maxItems: MAX_IMPORT_ITEMS,
      description: `1–${MAX_IMPORT_ITEMS.toLocaleString("en")} bodies of POST /v1/certificates; each is judged as that operation would judge it, and one that is invalid fails alone`,
    }),
  },
  { additionalProperties: false },
);
export type ImportBody = Static<typeof ImportBody>;

export const ImportItemResult = Type.Object(
  {
    index: Type.Integer({ minimum: 0, description: "The item's position in `certificates`, from 0" }),
    status: Type.Union([Type.Literal("created"), Type.Literal("failed")]),
    certificateId: Type.Union([Id("cert", "cert_3kT9vQm2Xy7LpA0bN5cZ"), Type.Null()]),
    error: Type.Union([Type.Object({ code: Type.String(), message: Type.String() }), Type.Null()], {
      description: "The error POST /v1/certificates would have answered for this body",
    }),
  },
  { additionalProperties: false },
);

export const Import = Type.Object(
  {
    id: Id("imp", "imp_4gT7vQm2Xy7LpA0bN5cZ"),
    status: Type.Union([Type.Literal("running"), Type.Literal("finished")]),
    total: Type.Integer({ minimum: 1 }),
    processed: Type.Integer({ minimum: 0 }),
    created: Type.Integer({ minimum: 0 }),
    failed: Type.Integer({ minimum: 0 }),
    createdAt: Timestamp,
    finishedAt: Type.Union([Timestamp, Type.Null()]),
    results: Type.Optional(Type.Array(ImportItemResult, { description: "Every item's outcome, by index; present once the import is finished" })),
  },
  { additionalProperties: false },
);
export type ImportView = Static<typeof Import>;
