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
