/**
 * Lists in one setting whose items may hold a comma (an issuer named `Entrust, Inc.`): items are
 * separated by commas, and `\,` and `\\` are a comma and a backslash inside an item.
 */

/** `text` split at its commas, `\,` and `\\` read as a comma and a backslash of the item. */
export function splitEscaped(text: string): string[] {
  const parts: string[] = [];
  let part = "";
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === "\\" && (text[i + 1] === "," || text[i + 1] === "\\")) part += text[++i];
    else if (char === ",") {
      parts.push(part);
      part = "";
    } else part += char;
  }
  parts.push(part);
  return parts;
}
