import { readdirSync, readFileSync } from "node:fs";

/** CPU seconds per thread of this process, by name (a worker's name is its thread id). */
export function threadCpu(): Map<string, number> {
  const threads = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      threads.set(name.startsWith("Worker") ? `${name}#${tid}` : name, (Number(fields[11]) + Number(fields[12])) / 100);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}
