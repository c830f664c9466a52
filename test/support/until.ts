/**
 * Waits until `check` answers something truthy (a failing check counts as not yet), looking every
 * 100 ms, and returns it; throws naming `what` once `timeoutMs` has passed. For tests that wait on
 * what several processes do, never on a fixed sleep.
 */
export async function until<T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => null);
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}
