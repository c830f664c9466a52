/**
 * A benchmark's working folder and the processes it starts: removed and killed at the end, or on
 * Ctrl-C. The helpers every end-to-end benchmark needs: a helper process reporting itself in one JSON
 * line, certkeeper's CLI run against the benchmark's database, and certkeeper served as users run it.
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
  /**
   * certkeeper's environment for this benchmark: its server on 127.0.0.1 at a {@link serverPort}, its
   * database a file in this folder, TLS targets under `*.domain` on loopback trusted through `caFile`,
   * then `settings`. Every other CERTKEEPER_ variable of this process is dropped, so that the machine's
   * own settings do not leak into the measurement.
   */
  serverEnv(targets: { domain: string; caFile: string }, settings?: Record<string, string>): Record<string, string>;
  /** An organization (enterprise plan, a rate limit no load reaches: the work is measured, not refusals), its owner, and a key of theirs. */
  benchKey(env: Record<string, string>): Promise<string>;
  /**
   * `certkeeper serve` as `npm start` runs it: a process of its own, with `env` (its CERTKEEPER_PORT
   * from {@link serverPort}) over this process's environment, its output in certkeeper.log. Resolves
   * once /readyz answers (the API served, the database open); throws with the log's end if it exits first or takes longer than 20 s.
   */
  serve(env: Record<string, string>, options?: { profiler?: string[] }): Promise<{ child: ReturnType<typeof Bun.spawn>; base: string }>;
}

/**
 * A port for certkeeper below the ephemeral range (32768 and up on Linux): a load's thousands of
 * connections sweep through that range, and a server port inside it may be taken when it starts.
 */
export function serverPort(): number {
  return 20_000 + Math.floor(Math.random() * 12_000);
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
  const cli = async (env: Record<string, string>, ...args: string[]) => {
    const child = Bun.spawn([process.execPath, CLI, ...args, "--json"], { cwd: dir, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (code !== 0) throw new Error(`certkeeper ${args.join(" ")}: ${err}`);
    return JSON.parse(out);
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
    cli,
    serverEnv({ domain, caFile }, settings = {}) {
      const env: Record<string, string> = {
        CERTKEEPER_HOST: "127.0.0.1",
        CERTKEEPER_PORT: String(serverPort()),
        CERTKEEPER_DATABASE_URL: `file:${join(dir, "data/certkeeper.db")}`,
        CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
        CERTKEEPER_RESOLVE: `*.${domain}=127.0.0.1`,
        CERTKEEPER_EXTRA_CA_FILE: caFile,
        ...settings,
      };
      for (const name of Object.keys(process.env)) if (name.startsWith("CERTKEEPER_") && !(name in env)) delete process.env[name];
      return env;
    },
    async benchKey(env) {
      const org = await cli(env, "org", "create", "--name", "Bench", "--plan", "enterprise", "--rate-limit", "1000000000");
      const user = await cli(env, "user", "create", "--org", org.id, "--email", "owner@bench.test", "--role", "owner");
      return (await cli(env, "key", "create", "--user", user.id, "--name", "bench")).key;
    },
    async serve(env, options = {}) {
      const log = join(dir, "certkeeper.log");
      const child = track(Bun.spawn([process.execPath, ...(options.profiler ?? []), CLI, "serve"], { cwd: dir, env: { ...process.env, ...env }, stdout: Bun.file(log), stderr: "inherit" }));
      const base = `http://127.0.0.1:${env.CERTKEEPER_PORT}`;
      for (let tries = 0; (await fetch(`${base}/readyz`).catch(() => null))?.status !== 200; tries++) {
        if (tries > 400 || child.exitCode !== null) throw new Error(`certkeeper did not start: ${(await Bun.file(log).text()).slice(-2000)}`);
        await Bun.sleep(50);
      }
      return { child, base };
    },
  };
}
