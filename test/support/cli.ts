/**
 * The CLI as a real process: `bun adapters/cli/main.ts <command> [flags]` with a chosen environment,
 * its stdout, stderr and exit code; and `serve` as a long-running process on a free port.
 */
import { afterAll, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { unusedPort } from "./servers.ts";

export const CLI_MAIN = resolve(import.meta.dir, "../../adapters/cli/main.ts");

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface CliOptions {
  /** CERTKEEPER_* variables (and any other) for the process; nothing else of the parent's leaks in. */
  env?: Record<string, string>;
  /** Written to the process's stdin, which is then closed. */
  stdin?: string;
  /** Working directory; the repository root when omitted. */
  cwd?: string;
  /** Kills the process after this long once it has started (default 20 s). */
  timeoutMs?: number;
}

/**
 * How many CLI commands of this test process run at once: as many as there are cores. Tests that run
 * side by side (describe.concurrent) would otherwise start a dozen processes together, each spending
 * about a second of CPU on its start, and on a small machine each would then take many seconds and
 * meet its kill timer; in turn, they finish sooner and the timer only counts a command's own run.
 */
const COMMAND_SLOTS = Math.max(1, availableParallelism());
let commandsRunning = 0;
const commandsWaiting: Array<() => void> = [];

async function commandSlot(): Promise<() => void> {
  if (commandsRunning >= COMMAND_SLOTS) await new Promise<void>((resolve) => commandsWaiting.push(resolve));
  else commandsRunning++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const next = commandsWaiting.shift();
    if (next) next();
    else commandsRunning--;
  };
}

/** The parent's environment without any CERTKEEPER_* variable: hermetic, but PATH and HOME stay. */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("CERTKEEPER_")) env[name] = value;
  }
  env.NO_COLOR = "1";
  return env;
}

/** Runs one CLI command, `bun adapters/cli/main.ts …args`, to completion. */
export function runCli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  return runProcess([process.execPath, CLI_MAIN, ...args], options);
}

/** Runs the CLI as users are told to: `bun run certkeeper …args` from the repository root. */
export function runCliScript(args: string[], options: Omit<CliOptions, "cwd"> = {}): Promise<CliResult> {
  return runProcess([process.execPath, "run", "certkeeper", ...args], options);
}

async function runProcess(argv: string[], options: CliOptions): Promise<CliResult> {
  const release = await commandSlot();
  try {
    return await runToEnd(argv, options);
  } finally {
    release();
  }
}

async function runToEnd(argv: string[], options: CliOptions): Promise<CliResult> {
  const child = Bun.spawn(argv, {
    cwd: options.cwd ?? resolve(import.meta.dir, "../.."),
    env: { ...baseEnv(), ...options.env },
    stdin: options.stdin === undefined ? "ignore" : new TextEncoder().encode(options.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000);
  try {
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    return { code, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * What a command said on stderr besides its log lines (the account commands log what they change,
 * one JSON line each when stderr is no terminal): its own messages.
 */
export function messagesOf(stderr: string): string {
  return stderr
    .split("\n")
    .filter((line) => !/^\{"time":"[^"]+","level":"(debug|info|warn|error)","msg":/.test(line))
    .join("\n");
}

/** The JSON log lines a command wrote on stderr. */
export function logLinesOf(stderr: string): Array<Record<string, unknown>> {
  return stderr.split("\n").filter((line) => line.startsWith('{"time":')).map((line) => JSON.parse(line));
}

/** Runs a command with `--json`, expects exit 0, nothing on stderr but log lines, and parses the whole stdout. */
export async function runCliJson(args: string[], options: CliOptions = {}): Promise<any> {
  const result = await runCli([...args, "--json"], options);
  if (result.code !== 0 || messagesOf(result.stderr) !== "") {
    throw new Error(`certkeeper ${args.join(" ")} exited ${result.code}\nstdout: ${result.stdout}\nstderr: ${result.stderr}`);
  }
  return JSON.parse(result.stdout);
}

/** A temporary folder with a database URL inside it; `cleanup()` removes it. */
export function tempWorkspace(prefix = "certkeeper-cli-") {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const databasePath = join(dir, "db.sqlite");
  return {
    dir,
    databasePath,
    env: { CERTKEEPER_DATABASE_URL: `file:${databasePath}` } as Record<string, string>,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export type Workspace = ReturnType<typeof tempWorkspace>;

/**
 * The workspaces of one test file, removed after all its tests: call once at the file's top level
 * and use what it returns as {@link tempWorkspace}.
 */
export function workspacesRemovedAfterAll(): () => Workspace {
  const workspaces: Workspace[] = [];
  afterAll(() => {
    for (const ws of workspaces) ws.cleanup();
  });
  return () => {
    const ws = tempWorkspace();
    workspaces.push(ws);
    return ws;
  };
}

/** A timestamp as the CLI prints it: ISO 8601 in UTC, to the millisecond. */
export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** A failed command: the exit code, nothing on stdout, a sentence on stderr. */
export function expectFailure(result: CliResult, code: number, stderr: RegExp): void {
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code, stdout: "" });
  expect(result.stderr).toMatch(stderr);
}

/** A usage error: exit 2 (3 for check), nothing on stdout, the message and a usage (the command's or all) on stderr. */
export function expectUsageError(result: CliResult, message: RegExp, code = 2): void {
  expectFailure(result, code, message);
  expect(result.stderr).toMatch(/Usage: certkeeper \S/);
  expect(result.stderr).not.toMatch(/\n\s+at \S+ \(|TypeError|ReferenceError/);
}

/** A database with one organization (free plan) and one user of `role`, made through the CLI. */
export async function orgWithUser(env: Record<string, string>, role = "owner") {
  const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", `${role}-${crypto.randomUUID()}@acme.test`, "--role", role], { env });
  return { org, user };
}

/** A TCP port on 127.0.0.1 free at the time of asking, that no test server listening on port 0 takes meanwhile. */
export function freePort(): Promise<number> {
  return unusedPort();
}

export interface ServeProcess {
  url: string;
  /** The process id (to pause it with SIGSTOP, for instance). */
  pid: number;
  /** What the process has written so far. */
  output(): { stdout: string; stderr: string };
  /** Sends `signal` and waits for the exit code (SIGKILL and -1 after `timeoutMs`). */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number>;
}

/**
 * Starts `certkeeper serve` on a free port of 127.0.0.1 and waits until it is ready (/readyz 200:
 * /healthz answers already while the database is opened; a probe's request line is debug, so the
 * wait writes nothing to the log).
 */
export async function startServe(options: { env: Record<string, string>; cwd?: string; readyTimeoutMs?: number }): Promise<ServeProcess> {
  const port = await freePort();
  const child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    cwd: options.cwd ?? resolve(import.meta.dir, "../.."),
    env: { ...baseEnv(), CERTKEEPER_HOST: "127.0.0.1", CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "warn", ...options.env },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let stdout = "";
  let stderr = "";
  const collect = async (stream: ReadableStream<Uint8Array>, append: (text: string) => void) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) append(decoder.decode(chunk, { stream: true }));
  };
  const drained = Promise.all([collect(child.stdout, (t) => (stdout += t)), collect(child.stderr, (t) => (stderr += t))]);
  const url = `http://127.0.0.1:${port}`;
  const process_: ServeProcess = {
    url,
    pid: child.pid,
    output: () => ({ stdout, stderr }),
    async stop(signal = "SIGTERM", timeoutMs = 5000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode ?? -1;
      child.kill(signal);
      const timedOut = Symbol("timeout");
      let timer: Timer | undefined;
      const code = await Promise.race([
        child.exited,
        new Promise<typeof timedOut>((r) => (timer = setTimeout(() => r(timedOut), timeoutMs))),
      ]);
      clearTimeout(timer);
      if (code === timedOut) {
        child.kill("SIGKILL");
        await child.exited;
        return -1;
      }
      await drained;
      return code;
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 15_000);
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      const response = await fetch(`${url}/readyz`);
      await response.arrayBuffer();
      if (response.status === 200) return process_;
    } catch {}
    await Bun.sleep(50);
  }
  await process_.stop("SIGKILL");
  throw new Error(`certkeeper serve did not become healthy on ${url}\nstdout: ${stdout}\nstderr: ${stderr}`);
}

/** One request to a `serve` process with an API key: its status and its JSON body. */
export async function callServe(server: ServeProcess, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, body: (await response.json()) as any };
}
