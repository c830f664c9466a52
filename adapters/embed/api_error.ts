/** The error the embed API throws: the HTTP API's error envelope as a typed exception. */
import { asCertkeeperError, ERROR_STATUS, errorBody, type PublicErrorCode, type Logger } from "../../core/base/mod.ts";

/**
 * What an embedded call throws when the HTTP API would have answered an error: the same `code` (as on
 * the wire), the same HTTP `status` and the same message. Unexpected failures are `internal_error`
 * (500) with the original error as `cause`.
 *
 * @example
 * try {
 *   await ck.certificates.add({ domain: "https://example.com/" });
 * } catch (error) {
 *   if (error instanceof CertkeeperApiError && error.code === "invalid_domain") console.log(error.status); // 400
 * }
 */
export class CertkeeperApiError extends Error {
  readonly code: PublicErrorCode;
  /** The HTTP status the API answers with this error. */
  readonly status: number;
  /** The call's request id, as the HTTP API's `meta.requestId`: an `internal_error`'s log line carries it. */
  readonly requestId: string | undefined;

  /** `status` defaults to the code's in the API's table; `certificate_not_found` is 422 when add() retrieved nothing. */
  constructor(code: PublicErrorCode, message: string, options: { status?: number; cause?: unknown; requestId?: string } = {}) {
    super(message, { cause: options.cause });
    this.name = "CertkeeperApiError";
    this.code = code;
    this.status = options.status ?? ERROR_STATUS[code];
    this.requestId = options.requestId;
  }
}

/** Renders anything an operation threw as the HTTP API would, through core's one renderer. */
export function toApiError(thrown: unknown, logger: Logger, requestId?: string): CertkeeperApiError {
  const error = asCertkeeperError(thrown);
  if (error.code === "internal_error") logger.error("embedded call failed", { requestId, error: error.cause ?? error });
  const { code, message } = errorBody(error).error;
  const cause = error.code === "internal_error" ? (error.cause ?? error) : error;
  return new CertkeeperApiError(code, message, { status: error.status, cause, requestId });
}
