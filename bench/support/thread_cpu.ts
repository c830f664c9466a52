import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU seconds per thread of this process, by name: the event loop (the thread whose id is the
 * process's) under its own name, a worker's with its thread id, and other threads of one name added up.
 */
export function threadCpu(): Map<string, number> {
  const threads = new Map<string, number>();
  const main = String(process.pid);
  const mainName = readFileSync("/proc/self/comm", "utf8").trim();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const key = tid === main ? name : /^(Worker|ck-)/.test(name) ? `${name}#${tid}` : name === mainName ? `${name} (other)` : name;
      threads.set(key, (threads.get(key) ?? 0) + cpuSecondsOf(stat));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** What each thread spent between two threadCpu() readings. */
export function threadCpuSince(before: Map<string, number>, after = threadCpu()): Map<string, number> {
  return new Map([...after].map(([name, seconds]) => [name, seconds - (before.get(name) ?? 0)]));
}

/** Each thread's CPU per item, busiest first, as `name µs` (threads under 1 µs left out; Worker ids dropped). */
export function cpuShares(threads: Map<string, number>, items: number): string {
  const byName = new Map<string, number>();
  for (const [name, seconds] of threads) byName.set(name.replace(/#\d+$/, ""), (byName.get(name.replace(/#\d+$/, "")) ?? 0) + seconds);
  return [...byName]
    .map(([name, seconds]) => [name, (seconds * 1e6) / Math.max(items, 1)] as const)
    .filter(([, us]) => us >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => `${name} ${us.toFixed(0)}`)
    .join(", ");
}

/**
 * CPU seconds per thread of another process, by name (several threads of one name add up), the event
 * loop (the thread whose id is the process's) under its own name apart from any other of that name.
 */
export function processThreadCpu(pid: number): Map<string, number> {
  const threads = new Map<string, number>();
  const main = readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const name = tid !== String(pid) && comm === main ? `${comm} (other)` : comm;
      threads.set(name, (threads.get(name) ?? 0) + cpuSecondsOf(stat));
    } catch {
      // The thread ended meanwhile.
    }
  }
  return threads;
}

/** CPU seconds the processes `pids` have used so far (user + system, all their threads); 0 for one that ended. */
export function processesCpu(pids: number[]): number {
  let seconds = 0;
  for (const pid of pids) {
    try {
      seconds += cpuSecondsOf(readFileSync(`/proc/${pid}/stat`, "utf8"));
    } catch {
      // The process ended.
    }
  }
  return seconds;
}

/** The whole machine's CPU time so far, busy and idle (idle + iowait), in seconds over all cores. */
export function machineCpu(): { busy: number; idle: number } {
  const [, ...ticks] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).map(Number);
  // user nice system idle iowait irq softirq steal (guest time is already inside user).
  const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
  const busy = ticks.slice(0, 8).reduce((sum, t) => sum + t, 0) - idle;
  return { busy: busy / 100, idle: idle / 100 };
}

/** User + system CPU seconds in a /proc `stat` line (utime and stime, after the parenthesised name). */
function cpuSecondsOf(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
