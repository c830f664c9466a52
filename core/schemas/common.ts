/** Schemas shared by every operation: timestamps, ids, envelopes, list queries. */
import { Type, type TSchema } from "@sinclair/typebox";
import { ERROR_STATUS } from "../base/errors.ts";

export const Timestamp = Type.String({
  format: "date-time",
  description: "UTC, YYYY-MM-DDTHH:mm:ss.sssZ",
  examples: ["2026-11-20T09:30:00.000Z"],
});

export const RequestId = Type.String({ pattern: "^req_[0-9A-Za-z]+$", examples: ["req_8fQ2mZk1Lr0pXw3TbN6a"] });

export function Id(prefix: string, example: string) {
  return Type.String({ pattern: `^${prefix}_[0-9A-Za-z]+$`, examples: [example] });
}

/** `{ data, meta: { requestId } }`. */
export function Envelope<T extends TSchema>(data: T) {
  return Type.Object({ data, meta: Type.Object({ requestId: RequestId }) });
}

/** `{ data: [...], meta: { requestId, nextCursor } }`. */
export function ListEnvelope<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    meta: Type.Object({
      requestId: RequestId,
      nextCursor: Type.Union([Type.String(), Type.Null()], {
        description: "Pass as `cursor` to get the next page; null on the last page.",
      }),
    }),
  });
}

const publicCodes = Object.keys(ERROR_STATUS).filter((code) => code !== "certificate_unreachable");

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Union(publicCodes.map((code) => Type.Literal(code))),
      message: Type.String(),
    }),
  },
  { additionalProperties: false },
);

export const IdParams = Type.Object({ id: Type.String({ description: "The resource's identifier" }) });

export const DeleteResult = Type.Object({ id: Type.String(), deleted: Type.Literal(true) });

/** Query parameters of every cursor-paginated list. */
export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20, description: "Items per page, 1–100 (default 20)", examples: [20] })),
  cursor: Type.Optional(Type.String({ description: "`meta.nextCursor` of the previous page" })),
};
