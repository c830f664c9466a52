/**
 * How long this process's event loop stood still, and how much its resident memory grew, while
 * something ran: a timer that should fire every few milliseconds notes the longest gap between its
 * firings, and samples the resident set at each.
 */
export interface Metered {
  /** The longest the event loop stood still, in ms (the last stretch, up to the stop, included). */
  longestMs: number;
  /** The resident set's peak above what it was at the start, in bytes. */
  rssGrowth: number;
}

export function meterEventLoop(everyMs = 5): { stop(): Metered } {
  let longestMs = 0;
  let last = performance.now();
  const rssBefore = process.memoryUsage().rss;
  let rssPeak = rssBefore;
  const timer = setInterval(() => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
    rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
  }, everyMs);
  return {
    stop() {
      clearInterval(timer);
      // A stall just before the stop ends with no firing after it.
      longestMs = Math.max(longestMs, performance.now() - last);
      return { longestMs, rssGrowth: rssPeak - rssBefore };
    },
  };
}
