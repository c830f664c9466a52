/**
 * XMPP STARTTLS (RFC 6120 §5.4): open a client stream to the domain, read the stream features, and if
 * they offer `<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>`, send it and wait for `<proceed/>`.
 */
import type { Conversation } from "./_conversation.ts";

const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
const TLS_NAMESPACE = new RegExp(`xmlns=(['"])${TLS_NS}\\1`);

export function streamHeader(domain: string): string {
  return `<?xml version='1.0'?><stream:stream to='${domain}' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`;
}

/*
 * What arrives before the upgrade is scanned with indexOf, in time linear in its length: a server
 * sending kilobytes of `<error <error …` one byte at a time must not make a pattern that backtracks
 * from every `<` hold the event loop.
 */

/** Where the first tag `<name` (followed by a space, `/` or `>`) of one of `names` starts, from `from`, or -1. */
function tagStart(text: string, names: readonly string[], from = 0): { at: number; name: string } | null {
  let first: { at: number; name: string } | null = null;
  for (const name of names) {
    for (let at = text.indexOf(`<${name}`, from); at >= 0; at = text.indexOf(`<${name}`, at + 1)) {
      const next = text[at + name.length + 1];
      if (next === undefined) break;
      if (next === "/" || next === ">" || /\s/.test(next)) {
        if (!first || at < first.at) first = { at, name };
        break;
      }
    }
  }
  return first;
}

/** Where the closing tag `</name>` (spaces allowed before `>`) first ends, from `from`, or -1. */
function closingTagEnd(text: string, name: string, from: number): number {
  for (let at = text.indexOf(`</${name}`, from); at >= 0; at = text.indexOf(`</${name}`, at + 1)) {
    let end = at + name.length + 2;
    while (end < text.length && /\s/.test(text[end]!)) end++;
    if (end >= text.length) return -1;
    if (text[end] === ">") return end + 1;
  }
  return -1;
}

/** The first element named one of `names`: which, and where it ends (self-closed, or at its closing tag; -1 while incomplete). */
function element(text: string, names: readonly string[]): { name: string; end: number } | null {
  const start = tagStart(text, names);
  if (!start) return null;
  const close = text.indexOf(">", start.at);
  if (close < 0) return { name: start.name, end: -1 };
  return { name: start.name, end: text[close - 1] === "/" ? close + 1 : closingTagEnd(text, start.name, close + 1) };
}

/** Where a stream error or the stream's end first ends, or -1. */
function streamErrorEnd(text: string): number {
  const error = element(text, ["error", "stream:error"])?.end ?? -1;
  const closed = closingTagEnd(text, "stream:stream", 0);
  return error < 0 ? closed : closed < 0 ? error : Math.min(error, closed);
}

/** Whether a `<starttls>` among the features names the TLS namespace. */
function offersStarttls(features: string): boolean {
  for (let start = tagStart(features, ["starttls"]); start; ) {
    const close = features.indexOf(">", start.at);
    if (TLS_NAMESPACE.test(features.slice(start.at, close < 0 ? features.length : close))) return true;
    if (close < 0) return false;
    start = tagStart(features, ["starttls"], close + 1);
  }
  return false;
}

export async function upgradeXmpp(c: Conversation, domain: string): Promise<void> {
  c.write(streamHeader(domain));
  const features = await c.until((text) => {
    const error = streamErrorEnd(text);
    return error >= 0 ? error : (element(text, ["features", "stream:features"])?.end ?? -1);
  });
  if (streamErrorEnd(features) >= 0) throw c.refused("closed the stream with an error instead of offering features");
  if (!offersStarttls(features)) throw c.refused("does not offer STARTTLS among its stream features");
  c.write(`<starttls xmlns='${TLS_NS}'/>`);
  const answer = await c.until((text) => element(text, ["proceed", "failure"])?.end ?? -1);
  if (element(answer, ["proceed", "failure"])!.name !== "proceed") throw c.refused("answered <starttls/> with <failure/>");
}
