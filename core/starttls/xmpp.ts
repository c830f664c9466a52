/**
 * XMPP STARTTLS (RFC 6120 §5.4): open a client stream to the domain, read the stream features, and if
 * they offer `<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>`, send it and wait for `<proceed/>`.
 */
import type { Conversation } from "./_conversation.ts";

const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";

export function streamHeader(domain: string): string {
  return `<?xml version='1.0'?><stream:stream to='${domain}' version='1.0' xml:lang='en' xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams'>`;
}

const FEATURES_END = /<(?:stream:)?features\b[^>]*\/>|<\/(?:stream:)?features\s*>/;
const STREAM_ERROR = /<(?:stream:)?error\b[\s\S]*?(?:\/>|<\/(?:stream:)?error\s*>)|<\/stream:stream\s*>/;
const OFFERS_STARTTLS = new RegExp(`<starttls\\b[^>]*xmlns=(['"])${TLS_NS}\\1`);
const ANSWER = /<(proceed|failure)\b[^>]*?(?:\/>|>[\s\S]*?<\/\1\s*>)/;

function endOf(pattern: RegExp, text: string): number {
  const match = pattern.exec(text);
  return match ? match.index + match[0].length : -1;
}

export async function upgradeXmpp(c: Conversation, domain: string): Promise<void> {
  c.write(streamHeader(domain));
  const features = await c.until((text) => {
    const error = endOf(STREAM_ERROR, text);
    return error >= 0 ? error : endOf(FEATURES_END, text);
  });
  if (STREAM_ERROR.test(features)) throw c.refused("closed the stream with an error instead of offering features");
  if (!OFFERS_STARTTLS.test(features)) throw c.refused("does not offer STARTTLS among its stream features");
  c.write(`<starttls xmlns='${TLS_NS}'/>`);
  const answer = await c.until((text) => endOf(ANSWER, text));
  if (ANSWER.exec(answer)![1] !== "proceed") throw c.refused("answered <starttls/> with <failure/>");
}
