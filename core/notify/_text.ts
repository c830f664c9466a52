/**
 * Cutting text to a receiver's limit: at most `max` UTF-16 units, an ellipsis marking the cut, never
 * half a character (a lone surrogate, which no UTF-8 encoder can write), nor, in `escaped` text (markup
 * with its specials escaped), half an escape (a trailing backslash of `\*`, an unfinished `&amp;`),
 * which the receiver would show broken.
 */
export function cut(text: string, max: number, escaped = false): string {
  if (text.length <= max) return text;
  let kept = text.slice(0, max - 1).replace(/[\uD800-\uDBFF]$/, "");
  if (!escaped) return `${kept}…`;
  // An HTML entity begun but not finished (Slack's &amp; &lt; &gt;).
  kept = kept.replace(/&[a-z]{0,3}$/, "");
  // A backslash escaping what was cut away (an odd count at the end).
  const backslashes = /\\+$/.exec(kept)?.[0].length ?? 0;
  if (backslashes % 2 === 1) kept = kept.slice(0, -1);
  return `${kept}…`;
}
