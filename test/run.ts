/**
 * `npm test`: the whole suite with `bun test`, its files spread over worker processes (the slowest
 * started first, by test/timings.json), then the ten slowest files of this run. Arguments are passed
 * on to `bun test` (`npm test -- test/cli.check.test.ts`, `npm test -- --update-timings` to refresh
 * the committed timings); its exit code is ours, so a failure fails `npm test`. The run's JUnit report,
 * with every file's time, stays in test-artifacts/junit.xml.
 *
 * TEST_WORKERS=N chooses the number of worker processes (default: two more than the cores, since
 * many files spend much of their time waiting on servers, child processes and deadlines: on 2 cores
 * the suite took 267 s with 3 workers and 243 s with 4, for the same CPU). Each worker keeps one
 * module registry across the files it runs (`--no-isolate`), as a plain `bun test` does in its one
 * process: the test PKI and the modules are made once per worker, not once per file.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, constants } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
const TIMINGS = "test/timings.json";
/** The run's JUnit report (git-ignored), kept for a look at every file's time and for CI. */
const REPORT = "test-artifacts/junit.xml";
const SHOWN = 10;

function workers(): number {
  const chosen = Number(process.env.TEST_WORKERS);
  if (Number.isInteger(chosen) && chosen >= 1) return chosen;
  return availableParallelism() + 2;
}

export interface FileTime {
  file: string;
  seconds: number;
  tests: number;
  failures: number;
}

/** The files of a JUnit report as `bun test --reporter=junit` writes it: one `<testsuite file=…>` per file, outermost. */
export function fileTimes(junit: string): FileTime[] {
  const times: FileTime[] = [];
  for (const match of junit.matchAll(/^ {2}<testsuite ([^>]*)>/gm)) {
    const attributes = Object.fromEntries([...match[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
    if (attributes.file === undefined) continue;
    times.push({
      file: attributes.file,
      seconds: Number(attributes.time ?? 0),
      tests: Number(attributes.tests ?? 0),
      failures: Number(attributes.failures ?? 0),
    });
  }
  return times.sort((a, b) => b.seconds - a.seconds);
}

/** Undoes the five entities XML escapes, and the numeric ones bun writes for line breaks. */
const unescapeXml = (text: string) =>
  text
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");

export interface TestFailure {
  file: string;
  name: string;
  /** What the failure printed: the error and where it was thrown. */
  text: string;
}

/** Every failed test of a JUnit report, with its error: the end of a long log (all CI keeps) still says why. */
export function failures(junit: string): TestFailure[] {
  const found: TestFailure[] = [];
  // A timeout is written as a self-closing <failure … message="test timed out" />: its message is its text.
  for (const match of junit.matchAll(/<testcase name="([^"]*)"[^>]*?file="([^"]*)"[^>]*>\s*<failure([^>]*?)(?:\/>|>([\s\S]*?)<\/failure>)/g)) {
    const text = match[4] ?? /message="([^"]*)"/.exec(match[3]!)?.[1] ?? "failed";
    found.push({ name: unescapeXml(match[1]!), file: match[2]!, text: unescapeXml(text).trim() });
  }
  return found;
}

/** The failures, each cut to its first lines. */
export function failuresText(found: TestFailure[], linesEach = 25): string {
  return found
    .map((f) => {
      const lines = f.text.split("\n");
      const shown = lines.slice(0, linesEach).map((line) => `    ${line}`);
      if (lines.length > linesEach) shown.push(`    … ${lines.length - linesEach} more lines (test-artifacts/junit.xml)`);
      return [`✗ ${f.file} > ${f.name}`, ...shown].join("\n");
    })
    .join("\n");
}

export function slowestTable(times: FileTime[], shown = SHOWN): string {
  const top = times.slice(0, shown);
  const width = Math.max(...top.map((t) => t.file.length), 4);
  const lines = top.map((t) => `${t.seconds.toFixed(1).padStart(7)} s  ${t.file.padEnd(width)}  ${t.tests} tests${t.failures ? `, ${t.failures} failed` : ""}`);
  return [`The slowest files (${top.length} of ${times.length}):`, ...lines].join("\n");
}

async function main(): Promise<number> {
  const report = join(ROOT, REPORT);
  mkdirSync(join(ROOT, "test-artifacts"), { recursive: true });
  rmSync(report, { force: true });
  const argv = [
    process.execPath,
    "test",
    "--timeout",
    "30000",
    `--parallel=${workers()}`,
    "--no-isolate",
    ...(existsSync(join(ROOT, TIMINGS)) ? [`--timings=${TIMINGS}`] : []),
    "--reporter=junit",
    `--reporter-outfile=${report}`,
    ...process.argv.slice(2),
  ];
  const started = performance.now();
  // Every Bun process of the run (the workers, and the servers and CLI commands the tests start) keeps
  // the TypeScript it transpiled in one cache, keyed by content: a process that loads the whole
  // wiring then starts on about 0.5 s of CPU instead of 0.7, and the suite starts hundreds.
  // Bun's allocator (mimalloc) hands freed memory back to the system 10 ms after it is freed, and takes
  // it again at the next allocation: in the suite's short-lived processes that cycle cost about a tenth
  // of their CPU, most of it in the kernel (a CLI test file: 14.2 s of CPU, 12.0 s with 1 s). A run's
  // processes keep freed memory a second instead. Nothing a test asserts depends on it.
  const env = {
    ...process.env,
    BUN_RUNTIME_TRANSPILER_CACHE_PATH: process.env.BUN_RUNTIME_TRANSPILER_CACHE_PATH ?? join(ROOT, "node_modules", ".cache", "bun-transpiler"),
    MIMALLOC_PURGE_DELAY: process.env.MIMALLOC_PURGE_DELAY ?? "1000",
  };
  const child = Bun.spawn(argv, { cwd: ROOT, env, stdio: ["inherit", "inherit", "inherit"] });
  // Ctrl-C reaches the whole process group; a SIGTERM sent to this process alone is passed on.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
  process.on("SIGTERM", forward("SIGTERM"));
  process.on("SIGINT", () => {});
  const code = await child.exited;
  const seconds = (performance.now() - started) / 1000;
  if (existsSync(report)) {
    const junit = readFileSync(report, "utf8");
    const failed = failures(junit);
    if (failed.length > 0) console.error(`\nWhy each failed test failed:\n${failuresText(failed)}`);
    const times = fileTimes(junit);
    if (times.length > 0) console.error(`\n${slowestTable(times)}\nThe run took ${seconds.toFixed(1)} s with ${workers()} workers (every file's time: ${REPORT}).`);
  }
  // Killed by a signal: the shell's convention, 128 + its number, so the run still counts as failed.
  if (child.signalCode) return 128 + (constants.signals[child.signalCode as keyof typeof constants.signals] ?? 0);
  return code;
}

if (import.meta.main) process.exitCode = await main();
