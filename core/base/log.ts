/** JSON logs, one object per line. Callers never pass secrets; fields are the only structure. */

export type LogLevel = "debug" | "info" | "warn" | "error";

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
  enabled(level: LogLevel): boolean;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** A logger writing `{"time","level","msg",...fields}` lines through `write` (default: stdout). */
export function createLogger(level: LogLevel, write: (line: string) => void = (line) => console.log(line)): Logger {
  const min = RANK[level];
  const log = (at: LogLevel) => (message: string, fields?: LogFields) => {
    if (RANK[at] < min) return;
    write(JSON.stringify({ time: new Date().toISOString(), level: at, msg: message, ...fields }, errorReplacer));
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (at) => RANK[at] >= min,
  };
}

/** Errors serialise as name, message and stack (stacks go to logs, never to responses). */
function errorReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
  return value;
}

export const silentLogger: Logger = createLogger("error", () => {});
