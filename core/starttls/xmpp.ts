/**
 * XMPP STARTTLS (RFC 6120 §5.4): open a client stream to the domain, read the stream features, and if
 * they offer `<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>`, send it and wait for `<proceed/>`.
 */
import type { Conversation } from "./_conversation.ts";

const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
/** The longest namespace prefix read (`tls` in `<tls:starttls`); real ones are a few characters. */
const MAX_PREFIX = 64;
/** The TLS namespace declared on an element: as the default one, or bound to a prefix (`xmlns:tls=`), spaces allowed around `=`. */
const TLS_NAMESPACE = new RegExp(`xmlns(?::[A-Za-z_][\\w.-]*)?\\s*=\\s*(['"])${TLS_NS}\\1`);

export function streamHeader(domain: string): string {
  return `<?xml version='1.0'?><stream:stream to='${domain}' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`;
}

/*
 * What arrives before the upgrade is scanned with indexOf, in time linear in its length: a server
 * sending kilobytes of `<error <error …` one byte at a time must not make a pattern that backtracks
 * from every `<` hold the event loop.
 */

/**
 * Where the first tag `<name` (followed by a space, `/` or `>`) of one of `names` starts, from `from`,
 * or null; with `prefixed`, also `<p:name` under any prefix (Namespaces in XML: the same element), the
 * tag's full name then given as found.
 */
function tagStart(text: string, names: readonly string[], from = 0, prefixed = false): { at: number; name: string } | null {
  let first: { at: number; name: string } | null = null;
  for (const name of names) {
    const found = tagStarts(text, name, from, prefixed).next();
    if (!found.done && (!first || found.value.at < first.at)) first = found.value;
  }
  return first;
}

/**
 * Every tag start of `name` from `from`, in order (`<name`, and with `prefixed` `<p:name`), found in
 * one pass over the text: each occurrence is looked at once, however many the caller goes through
 * (a server's features listing thousands of near-misses must not be scanned again for each element).
 * Stops at a name the text ends in the middle of (more may arrive).
 */
function* tagStarts(text: string, name: string, from: number, prefixed: boolean): Generator<{ at: number; name: string }> {
  const plain = occurrences(text, name, from, false);
  const withPrefix = prefixed ? occurrences(text, name, from, true) : null;
  let a = plain.next();
  let b: IteratorResult<{ at: number; name: string }> = withPrefix ? withPrefix.next() : { done: true, value: undefined };
  while (!a.done || !b.done) {
    if (b.done || (!a.done && a.value.at <= b.value.at)) {
      yield a.value;
      a = plain.next();
    } else {
      yield b.value;
      b = withPrefix!.next();
    }
  }
}

/** {@link tagStarts} of one form: `<name`, or (`prefixed`) `<p:name`, in order. */
function* occurrences(text: string, name: string, from: number, prefixed: boolean): Generator<{ at: number; name: string }> {
  const needle = prefixed ? `:${name}` : `<${name}`;
  for (let at = text.indexOf(needle, from); at >= 0; at = text.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    const next = text[end];
    if (next === undefined) return;
    if (next !== "/" && next !== ">" && !/\s/.test(next)) continue;
    if (!prefixed) {
      yield { at, name };
      continue;
    }
    // A prefix is a short name right after `<`: looked for within MAX_PREFIX characters only, so each
    // `:name` costs a bounded scan, and the whole text stays linear to search whatever it holds.
    let open = -1;
    for (let i = at - 1; i >= Math.max(from, at - MAX_PREFIX - 1); i--) {
      if (text[i] === "<") {
        open = i;
        break;
      }
    }
    if (open >= 0 && /^[A-Za-z_][\w.-]*$/.test(text.slice(open + 1, at))) yield { at: open, name: text.slice(open + 1, end) };
  }
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

/** The first element named one of `names` (under any prefix, with `prefixed`): which, and where it ends (self-closed, or at its closing tag; -1 while incomplete). */
function element(text: string, names: readonly string[], prefixed = false): { name: string; end: number } | null {
  const start = tagStart(text, names, 0, prefixed);
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

/** Whether a `<starttls>` among the features (under any prefix) names the TLS namespace. */
function offersStarttls(features: string): boolean {
  let after = 0;
  for (const start of tagStarts(features, "starttls", 0, true)) {
    if (start.at < after) continue; // within the element before
    const close = features.indexOf(">", start.at);
    if (TLS_NAMESPACE.test(features.slice(start.at, close < 0 ? features.length : close))) return true;
    if (close < 0) return false;
    after = close + 1;
  }
  return false;
}

/**
 * Where the server's stream header ends when it announces no version 1.0 or later, or -1: a pre-1.0
 * stream (RFC 6120 §4.7.5, taken as 0.9) sends no stream features, so it never offers STARTTLS.
 */
function oldStreamEnd(text: string): number {
  const header = tagStart(text, ["stream:stream"]);
  if (!header) return -1;
  const close = text.indexOf(">", header.at);
  if (close < 0) return -1;
  const version = /\sversion\s*=\s*(['"])(\d+)\.\d+\1/.exec(text.slice(header.at, close));
  return version && Number(version[2]) >= 1 ? -1 : close + 1;
}

export async function upgradeXmpp(c: Conversation, domain: string): Promise<void> {
  c.write(streamHeader(domain));
  const features = await c.until((text) => {
    const error = streamErrorEnd(text);
    if (error >= 0) return error;
    const old = oldStreamEnd(text);
    return old >= 0 ? old : (element(text, ["features", "stream:features"])?.end ?? -1);
  });
  if (streamErrorEnd(features) >= 0) throw c.refused("closed the stream with an error instead of offering features");
  if (oldStreamEnd(features) >= 0) throw c.refused("answered with a stream older than XMPP 1.0, which offers no STARTTLS");
  if (!offersStarttls(features)) throw c.refused("does not offer STARTTLS among its stream features");
  c.write(`<starttls xmlns='${TLS_NS}'/>`);
  // <proceed/>, <failure/>, or the stream ended with an error instead (RFC 6120 §4.9).
  const answer = await c.until((text) => {
    const error = streamErrorEnd(text);
    const reply = element(text, ["proceed", "failure"], true)?.end ?? -1;
    return error >= 0 && (reply < 0 || error < reply) ? error : reply;
  });
  const reply = element(answer, ["proceed", "failure"], true);
  if (!reply || reply.end < 0) throw c.refused("answered <starttls/> with a stream error");
  if (!reply.name.endsWith("proceed")) throw c.refused("answered <starttls/> with <failure/>");
}
