/**
 * Every CLI command once: its words, the flags it takes, its synopsis and help, and what runs it.
 * main.ts parses argv against this table, prints `help` and `--help` from it, and refuses flags a
 * command does not take, naming them.
 */
import type { Config } from "../../core/config/mod.ts";

export type Flags = Record<string, string | boolean | undefined>;

export interface CommandContext {
  config: Config;
  flags: Flags;
  /** Positional arguments after the command's words. */
  args: string[];
  /** Reads all of standard input (for `--password -`). */
  readStdin(): Promise<string>;
  /** True when stderr is a terminal (progress bars, prompts). */
  interactive: boolean;
}

/** What a command printed and how it ended; main.ts writes it out. */
export interface CommandOutcome {
  /** The `--json` document. */
  json: unknown;
  /** The human rendering. */
  text: string;
  /** Sentences for stderr (explanations of failures), printed in both modes. */
  notes?: string[];
  /** Exit code; 0 when omitted. */
  exitCode?: number;
}

export interface CommandSpec {
  /** The command's words: "check", "org create". */
  name: string;
  /** Flags besides --json and --help. */
  flags: string[];
  /** Positional arguments: none, or a description such as "DOMAIN[:PORT]...". */
  positionals?: { synopsis: string; min: number; max: number };
  synopsis: string;
  help: string;
  /** Exit code of a usage error (CONTRACT §17: `check` exits 3 when called wrongly). */
  usageExitCode?: number;
  run(context: CommandContext): Promise<CommandOutcome>;
}

/** A mistake in how a command was called: printed with the command's synopsis; exit 2 (3 for check). */
export class UsageError extends Error {}

/** A flag's value or a usage error naming the flag. */
export function requiredFlag(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== "string" || value === "") throw new UsageError(`--${name} is required`);
  return value;
}

/** The largest number a flag takes (a limit beyond it limits nothing, and beyond 2^53 is not kept exactly). */
const MAX_FLAG_NUMBER = 1_000_000_000;

/** A whole-number flag from `min` (0 unless said) to MAX_FLAG_NUMBER; `why` says why it starts at `min`. */
export function optionalInteger(flags: Flags, name: string, options: { min?: number; why?: string } = {}): number | undefined {
  const value = flags[name];
  if (value === undefined) return undefined;
  const min = options.min ?? 0;
  if (typeof value !== "string" || !/^\d+$/.test(value) || Number(value) > MAX_FLAG_NUMBER || Number(value) < min) {
    throw new UsageError(`--${name} must be a whole number from ${min} to ${MAX_FLAG_NUMBER.toLocaleString("en")}${options.why ? ` (${options.why})` : ""}; got "${value}"`);
  }
  return Number(value);
}

export function modeFlag(flags: Flags): "live" | "test" {
  const mode = flags.mode ?? "live";
  if (mode !== "live" && mode !== "test") throw new UsageError(`--mode must be live or test; got "${mode}"`);
  return mode;
}

/**
 * A flag that takes one of `allowed` (absent: undefined, or a wrong call when `required`); another value
 * is a wrong call naming the flag.
 */
export function choiceFlag<T extends string>(flags: Flags, name: string, allowed: readonly T[], options: { required: true }): T;
export function choiceFlag<T extends string>(flags: Flags, name: string, allowed: readonly T[]): T | undefined;
export function choiceFlag<T extends string>(flags: Flags, name: string, allowed: readonly T[], options: { required?: boolean } = {}): T | undefined {
  const value = options.required ? requiredFlag(flags, name) : flags[name];
  if (value === undefined) return undefined;
  if (typeof value !== "string" || !allowed.includes(value as T)) throw new UsageError(`--${name} must be ${allowed.join(", ").replace(/, ([^,]*)$/, " or $1")}; got "${value}"`);
  return value as T;
}
