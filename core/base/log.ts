/**
 * Logs, one entry per line: JSON objects (`{"time","level","msg",...fields}`) for machines, or readable
 * lines for people at a terminal (CONTRACT §10, §17). Callers never pass secrets; fields are the only
 * structure, and both formats show the same fields.
 */

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
  const write = options.write ?? ((line: string) => console.log(line));
  const render = options.format === "pretty" ? renderPretty : renderJson;
  const min = RANK[level];
  const log = (at: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[at] < min) return;
    write(render(new Date(), at, message, fields ?? {}));
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (at) => RANK[at] >= min,
  };
}

function renderJson(time: Date, level: LogLevel, message: string, fields: LogFields): string {
  return JSON.stringify({ time: time.toISOString(), level, msg: message, ...fields }, errorReplacer);
}

/**
 * `HH:MM:SS LEVEL message  key=value …` in UTC. An entry with a list of lines (first-start commands)
 * becomes a block: the message, each line indented on its own (copy-pasteable), then `key: value`.
 */
function renderPretty(time: Date, level: LogLevel, message: string, fields: LogFields): string {
  const head = `${time.toISOString().slice(11, 19)} ${level.toUpperCase().padEnd(5)} ${message}`;
  const entries = Object.entries(fields).filter(([, value]) => value !== undefined);
  const isLines = (value: unknown): value is string[] => Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string");
  if (!entries.some(([, value]) => isLines(value))) {
    return entries.length === 0 ? head : `${head}  ${entries.map(([key, value]) => `${key}=${prettyValue(value)}`).join(" ")}`;
  }
  const block = [head];
  for (const [key, value] of entries) {
    if (isLines(value)) block.push("", ...value.map((line) => `    ${line}`), "");
    else block.push(`  ${key}: ${typeof value === "string" ? value : prettyValue(value)}`);
  }
  return block.join("\n");
}

function prettyValue(value: unknown): string {
  if (value instanceof Error) return JSON.stringify(value.message);
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value, errorReplacer) ?? String(value);
}

/** Errors serialise as name, message and stack (stacks go to logs, never to responses). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

export const silentLogger: Logger = createLogger("error", () => {});
