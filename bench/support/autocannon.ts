/** Runs autocannon in a Node process of its own, so the load generator never shares the server's thread. */
import { resolve } from "node:path";

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

const AUTOCANNON = resolve(import.meta.dir, "../../node_modules/autocannon/autocannon.js");

export async function runAutocannon(options: { url: string; connections: number; seconds: number; headers?: Record<string, string> }): Promise<LoadResult> {
  const args = [AUTOCANNON, "--json", "-c", String(options.connections), "-d", String(options.seconds)];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push("-H", `${name}=${value}`);
  args.push(options.url);
  const child = Bun.spawn(["node", ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
  if (code !== 0) throw new Error(`autocannon failed (${code}): ${await new Response(child.stderr).text()}`);
  const result = JSON.parse(out);
  return {
    requestsPerSecond: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
  };
}
