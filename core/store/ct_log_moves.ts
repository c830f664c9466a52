/**
 * Which known CT logs a new log list moved to another URL (CONTRACT §21: positions are kept, nothing
 * skipped): a listed log whose URL is not known is a known log moved when that one has the same key
 * and kind and the list no longer names its URL. Each known log moves at most once; both stores
 * decide with this.
 */
export function movedLogs(
  known: ReadonlyArray<{ url: string; kind: string; key?: string | null }>,
  listed: ReadonlyArray<{ url: string; kind: string; keyBase64?: string }>,
): Array<[from: string, to: string]> {
  const listedUrls = new Set(listed.map((log) => log.url));
  const knownUrls = new Set(known.map((log) => log.url));
  const taken = new Set<string>();
  const moves: Array<[string, string]> = [];
  for (const log of listed) {
    if (knownUrls.has(log.url) || !log.keyBase64) continue;
    const before = known.find((old) => old.key === log.keyBase64 && old.kind === log.kind && !listedUrls.has(old.url) && !taken.has(old.url));
    if (!before) continue;
    taken.add(before.url);
    moves.push([before.url, log.url]);
  }
  return moves;
}
