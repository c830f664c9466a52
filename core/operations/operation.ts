/**
 * What an operation is: its route, its schemas (which validate requests and generate the OpenAPI
 * document), the errors it can answer, and a handler composed of core services.
 */
import { Type, type TObject, type TSchema } from "@sinclair/typebox";
import type { ErrorCode } from "../base/errors.ts";
import type { Principal } from "../auth/authenticate.ts";
import type { Services } from "./services.ts";

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export interface OperationContext {
  principal: Principal;
  services: Services;
  requestId: string;
  /**
   * The call comes from the process itself (the CLI, a program embedding certkeeper), the operator's
   * own hand: not rate limited, and not held to limits that protect the server from its callers.
   */
  host?: boolean;
}

export interface OperationInput {
  params: Record<string, string>;
  /** Validated by the operation's `query` schema: read it as `Static<typeof thatSchema>`. */
  query: Record<string, unknown>;
  body: unknown;
}

export interface OperationResult {
  data: unknown;
  /** For lists: the cursor of the next page, or null on the last. */
  nextCursor?: string | null;
  /**
   * `data` as JSON text, when the operation has it rendered already: the HTTP face answers with it
   * instead of serialising `data` (see {@link renderedResult}).
   */
  dataJson?: string;
}

/**
 * A result whose data is already JSON text (`dataJson`). HTTP sends the text; the in-process faces
 * (the embedding API, the settings area) read `data`, built by `build` on first reading, so a request
 * that only sends text never builds it.
 */
export function renderedResult(dataJson: string, build: () => unknown, nextCursor?: string | null): OperationResult {
  let data: unknown;
  let built = false;
  const result: OperationResult = {
    get data() {
      if (!built) {
        data = build();
        built = true;
      }
      return data;
    },
    ...(nextCursor === undefined ? {} : { nextCursor }),
  };
  // Not enumerable: an embedder serialising or comparing a result sees `data` (and `nextCursor`) only.
  Object.defineProperty(result, "dataJson", { value: dataJson, enumerable: false });
  return result;
}

export interface Operation {
  /** camelCase, unique: the OpenAPI operationId. */
  id: string;
  /** `namespace.method`: its function in the embedding API (`certificates.add`). */
  embed: `${string}.${string}`;
  method: HttpMethod;
  /** Elysia-style path, `/v1/certificates/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** Member keys may only read; `admin`: a read for owners and admins only (installation-wide state). */
  access: "read" | "write" | "admin";
  params?: TObject;
  query: TObject;
  /** Request body schema; operations without one take no body. */
  body?: TSchema;
  /** Body validation when the order of checks matters; default: validate against `body`. */
  parseBody?: (raw: unknown, services: Services) => unknown;
  status: 200 | 201 | 202;
  /** Largest request body accepted; default 64 KiB (CONTRACT §4). */
  maxBodyBytes?: number;
  /**
   * Levels of arrays and objects the body may nest beyond the HTTP face's own bound (a body that
   * wraps others' bodies, as an import wraps items each as deep as a POST's): 0 when absent.
   */
  bodyWrapLevels?: number;
  response: TSchema;
  /** Errors beyond the ones every authenticated operation can answer. */
  errors: ErrorCode[];
  /** A request and response example body for the documentation. */
  example?: { request?: unknown };
  handle(ctx: OperationContext, input: OperationInput): Promise<OperationResult>;
}

/** Errors every authenticated operation can answer. */
export const COMMON_ERRORS: ErrorCode[] = [
  "missing_api_key",
  "invalid_api_key",
  "expired_api_key",
  "rate_limit_exceeded",
  "invalid_request",
  "internal_error",
  // Any request may need a write (a shared rate limit, key use), and a full or read-only database refuses it.
  "storage_unavailable",
];

export const NoQuery = Type.Object({}, { additionalProperties: false });

/**
 * Declares an operation, keeping its literal id, tag and schema types: the embed adapter derives its
 * typed functions (arguments and results as `Static<…>` of the schemas) from them.
 */
export function defineOperation<const O extends Operation>(operation: O): O {
  return operation;
}
