/**
 * Whether `text` is an email address certkeeper will send to or sign in with: `local@domain`, at most
 * 254 characters; the local part 1–64 characters, none a space, a control, a zero-width or bidi
 * character, or one of `@<>()[]\,;:"`, and no dot at either end or two in a row (RFC 5322's
 * dot-atom); the domain two or more labels of 1–63 letters, digits or hyphens (not at either end;
 * letters of any script, as internationalised domains have them), with no empty label, the last not
 * all digits (an IP address is no domain).
 */
export function isEmailAddress(text: string): boolean {
  if (text.length > 254) return false;
  const at = text.lastIndexOf("@");
  if (at <= 0 || at > 64) return false;
  const local = text.slice(0, at);
  const labels = text.slice(at + 1).split(".");
  if (local.startsWith(".") || local.endsWith(".") || local.includes("..")) return false;
  return LOCAL_PART.test(local) && labels.length >= 2 && labels.every((label) => DOMAIN_LABEL.test(label)) && !/^\d+$/.test(labels.at(-1)!);
}

/**
 * Spaces, controls (C0, DEL, C1), line and bidi marks and controls, zero-width characters, and the
 * characters that end an address in a header.
 */
const LOCAL_PART = /^[^\s\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff@<>()[\]\\,;:"]+$/u;
const DOMAIN_LABEL = /^(?=.{1,63}$)[\p{L}\p{N}](?:[\p{L}\p{N}\p{M}-]*[\p{L}\p{N}\p{M}])?$/u;
