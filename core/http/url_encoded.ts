/**
 * `application/x-www-form-urlencoded` text (a form's body, a query string) read as URLSearchParams
 * reads it, except that a %-escape standing for bytes that are not UTF-8 is refused: URLSearchParams
 * would put U+FFFD in their place, and what is stored or searched for would not be what was sent.
 */

/** The name-value pairs of `text` in order, or null when its %-escapes do not decode to UTF-8. */
export function urlEncodedPairs(text: string): Array<[string, string]> | null {
  const pairs = [...new URLSearchParams(text)];
  // U+FFFD comes only from a broken escape, or from one sent on purpose: only then is the text read again.
  if (!pairs.some(([name, value]) => name.includes("\uFFFD") || value.includes("\uFFFD"))) return pairs;
  return escapesDecode(text) ? pairs : null;
}

const strict = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Whether the bytes `text` stands for (each %XX a byte, the rest as UTF-8) are UTF-8. */
function escapesDecode(text: string): boolean {
  // Split on the escapes: odd parts are escapes, even parts text as sent.
  const parts = text.split(/(%[0-9A-Fa-f]{2})/);
  const chunks = parts.map((part, i) => (i % 2 === 1 ? Uint8Array.of(parseInt(part.slice(1), 16)) : encoder.encode(part)));
  const bytes = new Uint8Array(chunks.reduce((n, chunk) => n + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  try {
    strict.decode(bytes);
    return true;
  } catch {
    return false;
  }
}
