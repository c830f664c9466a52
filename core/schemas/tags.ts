/** Certificate tags (CONTRACT §16): the schema that validates them, and their stored order. */
import { Type } from "@sinclair/typebox";

export const MAX_TAGS = 20;
export const TAG_PATTERN = "^[a-z0-9_.:/-]{1,50}$";

export const Tag = Type.String({
  minLength: 1,
  maxLength: 50,
  pattern: TAG_PATTERN,
  description: "1–50 characters of a-z 0-9 - _ . : /",
  examples: ["team:payments"],
});

export const Tags = Type.Array(Tag, {
  maxItems: MAX_TAGS,
  uniqueItems: true,
  description: `0–${MAX_TAGS} distinct tags; returned sorted`,
  examples: [["env:prod", "team:payments"]],
});

/** Tags as stored and returned: sorted, so equal sets are equal arrays. */
export function sortTags(tags: readonly string[]): string[] {
  return [...tags].sort();
}
