/**
 * Logs, one entry per line: JSON objects (`{"time","level","msg",...fields}`) for machines, or readable
 * lines for people at a terminal (CONTRACT §10, §17). Callers never pass secrets; fields are the only
 * structure, and both formats show the same fields.
 */
import { writeSync } from "node:fs";

export type LogLevel = "debug" | "info" | "warn" | "error";
/** `auto`: readable lines when stdout is a terminal, JSON lines otherwise (decided by the adapter that owns stdout). */
export type LogFormat = "json" | "pretty" | "auto";

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  enabled(level: LogLevel): boolean;
}

export interface LoggerOptions {
  /** `json` (default) or `pretty`. */
  format?: Exclude<LogFormat, "auto">;
  /** Where lines go (default: stdout). A pretty entry may span several lines, written at once. */
  write?: (line: string) => void;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/**
 * A logger at `level`, writing through `write` (or `options.write`).
 *
 * @example
 * const logger = createLogger("info", { format: "pretty" });
 * logger.info("certkeeper is listening", { url: "http://127.0.0.1:3000" });
 * // 06:01:02 INFO  certkeeper is listening  url=http://127.0.0.1:3000
 */
export function createLogger(level: LogLevel, writeOrOptions: ((line: string) => void) | LoggerOptions = {}): Logger {
  const options = typeof writeOrOptions === "function" ? { write: writeOrOptions } : writeOrOptions;
  const write = options.write ?? stdoutLines();
  const render = options.format === "pretty" ? renderPretty : renderJson;
  const min = RANK[level];
  const log = (at: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[at] < min) return;
    write(render(timestamp(), at, message, fields ?? {}));
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (at) => RANK[at] >= min,
  };
}

/** The time of an entry, ISO 8601: formatted once per millisecond however many lines it holds. */
let lastMs = -1;
let lastIso = "";
function timestamp(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}

function renderJson(time: string, level: LogLevel, message: string, fields: LogFields): string {
  // The head written out, the fields serialised on their own: no copy of them into a new entry (a
  // line per request). The fields never name time, level or msg.
  const head = `{"time":"${time}","level":"${level}","msg":${JSON.stringify(message)}`;
  let rest: string | undefined;
  // A replacer costs a call per value: only entries that carry an object (an error) need one.
  for (const key in fields) {
    const value = fields[key];
    if (typeof value === "object" && value !== null) {
      rest = JSON.stringify(fields, errorReplacer);
      break;
    }
  }
  rest ??= JSON.stringify(fields);
  return rest.length === 2 ? `${head}}` : `${head},${rest.slice(1)}`;
}

let stdoutWriter: ((line: string) => void) | undefined;

/**
 * Lines to stdout, gathered and written once per turn of the event loop (or per 64 KB): under load, one
 * write for many request lines instead of one each. What is still gathered when the process exits is
 * written synchronously then; only a process killed outright (SIGKILL) loses its last turn's lines.
 */
function stdoutLines(): (line: string) => void {
  if (stdoutWriter) return stdoutWriter;
  let pending = "";
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    process.stdout.write(text);
  };
  process.once("exit", () => {
    if (pending === "") return;
    try {
      writeSync(1, pending);
    } catch {
      // stdout is gone (a closed pipe): nothing left to tell.
    }
    pending = "";
  });
  stdoutWriter = (line) => {
    pending += `${line}\n`;
    if (pending.length >= 65_536) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
  return stdoutWriter;
}

/**
 * `HH:MM:SS LEVEL message  key=value …` in UTC. An entry with a list of lines (first-start commands)
 * becomes a block: the message, each line indented on its own (copy-pasteable), then `key: value`.
 */
function renderPretty(time: string, level: LogLevel, message: string, fields: LogFields): string {
  const head = `${time.slice(11, 19)} ${level.toUpperCase().padEnd(5)} ${message}`;
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  const isLines = (value: unknown): value is string[] => Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string");
  if (!entries.some(([, value]) => isLines(value))) {
    return entries.length === 0 ? head : `${head}  ${entries.map(([key, value]) => `${key}=${prettyValue(value)}`).join(" ")}`;
  }
  const block = [head];
  for (const [key, value] of entries) {
    if (isLines(value)) block.push("", ...value.map((line) => `    ${printable(line, false)}`), "");
    else block.push(`  ${key}: ${typeof value === "string" ? printable(value, false) : prettyValue(value)}`);
  }
  return block.join("\n");
}

function prettyValue(value: unknown): string {
  if (value instanceof Error) return printable(JSON.stringify(value.message));
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) && printable(value) === value ? value : printable(JSON.stringify(value));
  return printable(JSON.stringify(value, errorReplacer) ?? String(value));
}

/** What a terminal would act on instead of showing: C0 and C1 controls, DEL, line and bidirectional-order marks. */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const CONTROLS_AND_LAYOUT = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` safe to write to a terminal: every character a terminal would act on (an escape sequence
 * clearing the screen, setting the title or the clipboard, text reordered) written out as `\x1b` or
 * `\u202e`. Line breaks and tabs stay, unless `layout` is false (a table's cell, a value on one line).
 * Data callers chose (names, tags, a server's error) passes through this before any terminal sees it.
 */
export function printable(text: string, layout = true): string {
  return text.replace(layout ? CONTROLS : CONTROLS_AND_LAYOUT, (char) => {
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/**
 * A name a server or a CA chose (an issuer's, a chain certificate's, a log's), as certkeeper shows it
 * to people: on one line, every control or reordering character written out, at most `max` characters
 * (a hostile certificate may carry 90 KB in one).
 */
export function nameShown(name: string, max = 256): string {
  const shown = printable(name, false);
  if (shown.length <= max) return shown;
  // Never half a character: a cut between the two halves of a surrogate pair moves before it.
  const end = /[\uD800-\uDBFF]/.test(shown[max - 2] ?? "") ? max - 2 : max - 1;
  return `${shown.slice(0, end)}…`;
}

/** Errors serialise as name, message and stack (stacks go to logs, never to responses). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

export const silentLogger: Logger = createLogger("error", () => {});
