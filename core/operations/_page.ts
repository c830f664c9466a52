/** Cursor pagination: limits, and opaque cursors that encode a keyset position. */
import { createHash } from "node:crypto";
import { CertkeeperError } from "../base/errors.ts";
import type { Scope } from "../base/records.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The page size a list query asked for (validated 1–100 by the schema), or the default. */
export function pageLimit(limit: unknown): number {
  return typeof limit === "number" ? limit : DEFAULT_PAGE_SIZE;
}

/**
 * The cursors of one list under one set of filters: each names its list and a digest of the filters it
 * was made under (and of the organization and mode), so that a cursor of another list (whose position
 * has the same shape: a time and an id), of other filters or of another caller's list is refused
 * instead of answering a page that continues nothing.
 *
 * @example
 * const pages = listPages("channels", query, principal.scope);
 * const before = pages.position(query.cursor, ["number", "string"]);
 * const { page, nextCursor } = pages.paginate(channels, limit, (c) => [c.createdAt, c.id]);
 */
export function listPages(list: string, query: Record<string, unknown>, scope: Scope) {
  const filters = filterDigest(query, scope);
  return {
    /** The keyset position in `cursor` (one typeof per element of `shape`); undefined without one. */
    position(cursor: unknown, shape: Array<"string" | "number">): Array<string | number> | undefined {
      if (typeof cursor !== "string") return undefined;
      const decoded = decodeCursor(cursor, ["string", "string", ...shape]);
      if (decoded[0] !== list || decoded[1] !== filters) {
        throw new CertkeeperError(
          "invalid_request",
          `Query parameter "cursor" was made for ${decoded[0] === list ? "other filters" : "another list"}: pass meta.nextCursor of the previous page of this same list, with the same filters, or list again without a cursor.`,
        );
      }
      return decoded.slice(2);
    },
    /** Splits a `limit + 1` result into the page and the next cursor. */
    paginate<T>(items: T[], limit: number, positionOf: (item: T) => Array<string | number>) {
      const page = items.slice(0, limit);
      const nextCursor = items.length > limit ? encodeCursor([list, filters, ...positionOf(page.at(-1)!)]) : null;
      return { page, nextCursor };
    },
  };
}

/**
 * A short digest of a list's filters (every query parameter but the cursor and the page size, lists in
 * any order) and of whose list it is.
 */
function filterDigest(query: Record<string, unknown>, scope: Scope): string {
  const filters = Object.keys(query)
    .filter((key) => key !== "cursor" && key !== "limit" && query[key] !== undefined)
    .sort()
    .map((key) => [key, Array.isArray(query[key]) ? [...(query[key] as unknown[])].map(String).sort() : query[key]]);
  return createHash("sha256").update(JSON.stringify([scope.organizationId, scope.mode, filters])).digest("base64url").slice(0, 11);
}

/** An opaque cursor for a keyset position (base64url of a JSON array). */
function encodeCursor(position: Array<string | number>): string {
  return Buffer.from(JSON.stringify(position)).toString("base64url");
}

/**
 * The keyset position in `cursor`, checked against `shape` (one typeof per element), or throws
 * `invalid_request`.
 */
function decodeCursor(cursor: string, shape: Array<"string" | "number">): Array<string | number> {
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
