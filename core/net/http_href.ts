/**
 * An http(s) URL as the WHATWG parser reads it, or null: its href is one line, with every control,
 * space and non-ASCII character percent-encoded (tabs and line breaks dropped). What a remote party
 * wrote as a URL (a CA's ARI explanation) is kept and shown this way, never as written: a line break,
 * a terminal escape or a bidi override of theirs would act in a log line, a CLI note or a notification.
 */
export function httpHref(text: string): string | null {
  try {
    const url = new URL(text);
    return url.protocol === "https:" || url.protocol === "http:" ? url.href : null;
  } catch {
    return null;
  }
}
