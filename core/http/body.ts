/** Reading a JSON request body safely: declared type, bounded size, clear errors. */
import { CertkeeperError, MAX_BODY_BYTES, MAX_BODY_DEPTH, nestedDeeperThan, payloadTooLarge as tooLarge, quote } from "../base/errors.ts";

export { MAX_BODY_BYTES, MAX_BODY_DEPTH };

/** `application/json`, or a `+json` type. */
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function notJson(type: string): CertkeeperError {
  return new CertkeeperError(
    "unsupported_media_type",
    `The request body must be JSON: send it with "Content-Type: application/json"${type ? ` (got "${type.slice(0, 60)}")` : ""}.`,
  );
}

/** The parsed JSON body of `request`, or throws 415, 413 or 400 as CONTRACT §4 says. */
export async function readJsonBody(request: Request, maxBytes: number = MAX_BODY_BYTES, maxDepth: number = MAX_BODY_DEPTH): Promise<unknown> {
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type.trim())) throw notJson(type);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > maxBytes) throw tooLarge(maxBytes);
  const text = await readBounded(request, maxBytes);
  if (text.trim() === "") throw new CertkeeperError("invalid_request", "The request body is empty: send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new CertkeeperError("invalid_request", `The request body is not valid JSON: ${(error as Error).message}.`);
  }
  if (nestedDeeperThan(body, maxDepth)) {
    throw new CertkeeperError("invalid_request", `The request body nests arrays and objects more than ${maxDepth} levels deep.`);
  }
  return body;
}

/**
 * The body of a request that takes none (a re-check, a test, a poll, a removal): none at all, an empty
 * one, or `{}` or `null` as some client libraries send, is nothing. Anything else is refused as any
 * body's mistake is: not JSON (415), broken JSON or a field (400: the request would not do what the
 * caller meant, and saying so beats ignoring it).
 */
export async function readNoBody(request: Request): Promise<undefined> {
  if (!request.body || request.headers.get("content-length") === "0") return undefined;
  const text = await readBounded(request, MAX_BODY_BYTES);
  // Nothing, whatever type it was sent as (`curl -d '{}'` sends a form's).
  if (/^\s*(\{\s*\}|null)?\s*$/.test(text)) return undefined;
  const type = request.headers.get("content-type") ?? "";
  if (!JSON_TYPE.test(type.trim())) throw notJson(type);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    throw new CertkeeperError("invalid_request", `The request body is not valid JSON: ${(error as Error).message} (this request takes no body: send none).`);
  }
  if (body === null) return undefined;
  if (typeof body === "object" && !Array.isArray(body)) {
    const [field] = Object.keys(body);
    if (field === undefined) return undefined;
    throw new CertkeeperError("invalid_request", `Unknown field ${quote(field)}: this request takes no body (send none, or {}).`);
  }
  throw new CertkeeperError("invalid_request", "This request takes no body: send none, or {}.");
}

/**
 * A body of at most `maxBytes` as UTF-8 (400 `invalid_request` when it is not), or 413 `payload_too_large`: a declared Content-Length over
 * the cap is refused before anything is read, and a body without one (chunked) or longer than it
 * claimed is read only up to the cap, then its stream is cancelled. An oversized body is never held whole.
 */
export async function readBounded(request: Request, maxBytes: number = MAX_BODY_BYTES): Promise<string> {
  if (Number(request.headers.get("content-length") ?? "0") > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read().catch((error: unknown) => {
      // The client hung up or stopped sending mid-body: its doing, answered (to no one) and logged as a
      // bad request at info, not as a failure of ours.
      throw new CertkeeperError("invalid_request", "The request body ended early: the connection was closed before all of it arrived.", {
        cause: error,
      });
    });
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(maxBytes);
    }
    chunks.push(value);
  }
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch (error) {
    // JSON between systems is UTF-8 (RFC 8259 §8.1): bytes that are not would be stored as U+FFFD,
    // a name no one typed.
    throw new CertkeeperError("invalid_request", "The request body is not valid UTF-8: send its text encoded as UTF-8.", { cause: error });
  }
}

