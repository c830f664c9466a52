/** Cursor pagination: limits, and opaque cursors that encode a keyset position. */
import { CertkeeperError } from "../base/errors.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The page size a list query asked for (validated 1–100 by the schema), or the default. */
export function pageLimit(limit: unknown): number {
  return typeof limit === "number" ? limit : DEFAULT_PAGE_SIZE;
}

/** An opaque cursor for a keyset position (base64url of a JSON array). */
export function encodeCursor(position: Array<string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

/**
 * The keyset position in `cursor`, checked against `shape` (one typeof per element), or throws
 * `invalid_request`.
 */
export function decodeCursor(cursor: string, shape: Array<"string" | "number">): Array<string | number> {
  let position: unknown;
  try {
    position = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    position = undefined;
  }
  const valid =
    Array.isArray(position) &&
    position.length === shape.length &&
    position.every((value, i) => typeof value === shape[i] && (typeof value !== "number" || Number.isSafeInteger(value)));
  if (!valid || cursor.length > 200) {
    throw new CertkeeperError(
      "invalid_request",
      `Query parameter "cursor" is not a valid cursor: pass meta.nextCursor of the previous page unchanged.`,
    );
  }
  return position as Array<string | number>;
}

/** Splits a `limit + 1` result into the page and the next cursor. */
export function paginate<T>(items: T[], limit: number, positionOf: (item: T) => Array<string | number>) {
  const page = items.slice(0, limit);
  const nextCursor = items.length > limit ? encodeCursor(positionOf(page.at(-1)!)) : null;
  return { page, nextCursor };
}
