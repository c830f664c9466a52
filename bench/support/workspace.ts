/**
 * A benchmark's working folder and the processes it starts: removed and killed at the end, or on
 * Ctrl-C. The helpers every end-to-end benchmark needs: a helper process reporting itself in one JSON
 * line, and certkeeper's CLI run against the benchmark's database.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dir, "../..");
export const CLI = join(ROOT, "adapters/cli/main.ts");

export interface BenchWorkspace {
  dir: string;
  /** Killed at cleanup. */
  track<T extends { kill(signal?: number | string): void }>(child: T): T;
  cleanup(): void;
  /** Starts a process printing one JSON line first; returns the process and that line. */
  spawnReporting(argv: string[], env?: Record<string, string>): Promise<{ child: ReturnType<typeof Bun.spawn>; info: any }>;
  /** `certkeeper <args> --json` with `env` over this process's environment: its JSON answer, or a throw with its stderr. */
  cli(env: Record<string, string>, ...args: string[]): Promise<any>;
}

export function benchWorkspace(prefix: string): BenchWorkspace {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const children: Array<{ kill(signal?: number | string): void }> = [];
  const cleanup = () => {
    for (const child of children) child.kill();
    rmSync(dir, { recursive: true, force: true });
  };
  process.on("SIGINT", () => {
    cleanup();
    process.exit(130);
  });
  const track = <T extends { kill(signal?: number | string): void }>(child: T) => {
    children.push(child);
    return child;
  };
  return {
    dir,
    track,
    cleanup,
    async spawnReporting(argv, env = {}) {
      // stderr ignored: the TLS server reports each OCSP request there.
      const child = track(Bun.spawn(argv, { cwd: dir, env: { ...process.env, ...env }, stdout: "pipe", stderr: "ignore" }));
      const reader = child.stdout.getReader();
      const { value } = await reader.read();
      reader.releaseLock();
      return { child, info: JSON.parse(new TextDecoder().decode(value).split("\n")[0]!) };
    },
    async cli(env, ...args) {
      const child = Bun.spawn([process.execPath, CLI, ...args, "--json"], { cwd: dir, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
      const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      if (code !== 0) throw new Error(`certkeeper ${args.join(" ")}: ${err}`);
      return JSON.parse(out);
    },
  };
}
