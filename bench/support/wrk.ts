/**
 * Load from wrk (https://github.com/wg/wrk) in a process of its own, with a Lua script that rotates
 * over a list of paths, and the CPU time the server process spent meanwhile (utime + stime from
 * /proc/<pid>/stat), so that a figure per request can be compared between machines.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { execFileSync } from "node:child_process";

export interface LoadResult {
  requestsPerSecond: number;
  requests: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  /** CPU time of the server process per request answered, in microseconds. */
  cpuUsPerRequest: number;
}

export interface LoadOptions {
  /** http://host:port, without a path. */
  base: string;
  /** Requested in turn, one after the other, by every connection. */
  paths: string[];
  headers?: Record<string, string>;
  connections: number;
  seconds: number;
  /** The server's process id, whose CPU time is read before and after. */
  pid: number;
  /** Where the Lua script is written. */
  scriptPath: string;
}

const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

/** Seconds of CPU (user + system, every thread) the process has used so far. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may hold spaces: utime is the 14th
  // field of the line, stime the 15th.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

const lua = (value: string) => JSON.stringify(value); // a JSON string is a valid Lua string literal here

function script(paths: string[], headers: Record<string, string>): string {
  const headerLines = Object.entries(headers).map(([name, value]) => `wrk.headers[${lua(name)}] = ${lua(value)}`);
  return `${headerLines.join("\n")}
local paths = { ${paths.map(lua).join(", ")} }
local requests = {}
local i = 0
init = function(args)
  for n, path in ipairs(paths) do requests[n] = wrk.format("GET", path) end
end
request = function()
  i = i % #requests + 1
  return requests[i]
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"durationUs":%d,"p50Us":%d,"p99Us":%d,"maxUs":%d,"non2xx":%d,"errors":%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max, e.status,
    e.connect + e.read + e.write + e.timeout))
end
`;
}

export async function runWrk(options: LoadOptions): Promise<LoadResult> {
  writeFileSync(options.scriptPath, script(options.paths, options.headers ?? {}));
  const cpuBefore = cpuSeconds(options.pid);
  const child = Bun.spawn(
    ["wrk", "-t1", `-c${options.connections}`, `-d${options.seconds}s`, "--timeout", "5s", "-s", options.scriptPath, options.base],
    { stdout: "pipe", stderr: "pipe" },
  );
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const cpu = cpuSeconds(options.pid) - cpuBefore;
  if (code !== 0) throw new Error(`wrk failed (${code}): ${err}${out}`);
  const line = out.split("\n").find((l) => l.startsWith('{"requests"'));
  if (!line) throw new Error(`wrk printed no summary:\n${out}`);
  const r = JSON.parse(line) as { requests: number; durationUs: number; p50Us: number; p99Us: number; maxUs: number; non2xx: number; errors: number };
  return {
    requestsPerSecond: r.requests / (r.durationUs / 1e6),
    requests: r.requests,
    p50Ms: r.p50Us / 1000,
    p99Ms: r.p99Us / 1000,
    maxMs: r.maxUs / 1000,
    non2xx: r.non2xx,
    errors: r.errors,
    cpuUsPerRequest: (cpu * 1e6) / Math.max(r.requests, 1),
  };
}
