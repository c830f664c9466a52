/** Threads of this process, where Linux shows them (/proc/self/task); elsewhere null. */
import { existsSync, readdirSync, readFileSync } from "node:fs";

/** How many threads of this process are named `name` (as `top -H` shows them); null where /proc cannot tell. */
export function threadsNamed(name: string): number | null {
  if (!existsSync("/proc/self/task")) return null;
  return readdirSync("/proc/self/task").filter((task) => {
    try {
      return readFileSync(`/proc/self/task/${task}/comm`, "utf8").trim() === name;
    } catch {
      return false; // ended meanwhile
    }
  }).length;
}

/**
 * How many threads are named `name` once there are `count` of them, or after `timeoutMs`, whichever
 * comes first: a new thread takes its name when it starts running, a moment after it was asked for.
 */
export async function threadsNamedSoon(name: string, count: number, timeoutMs = 5000): Promise<number | null> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const now = threadsNamed(name);
    if (now === null || now === count || performance.now() >= until) return now;
    await Bun.sleep(10);
  }
}
