/**
 * `certkeeper <command> [flags]`: run the server, manage organizations, users and keys, check
 * domains, list certificates, back up. With `--json` a command prints exactly one JSON document on
 * stdout; errors go to stderr with a non-zero exit (1: the command failed, 2: it was called wrongly;
 * `check` exits as a monitoring plugin, 3 when called wrongly). `help` and `--help` work everywhere.
 */
import { parseArgs } from "node:util";
import { configFromEnv, ConfigError, listenHost, listenPort, type Config } from "../../core/config/mod.ts";
import { CertkeeperError, printable } from "../../core/base/mod.ts";
import { ACCOUNT_COMMANDS } from "./commands.ts";
import { checkCommand } from "./check.ts";
import { loadTrust } from "./trust.ts";
import { certificateListCommand } from "./certificate_list.ts";
import { backupCommand } from "./backup.ts";
import { importCommand } from "./import.ts";
import { certificateAddCommand, certificateRemoveCommand } from "./certificates.ts";
import { channelListCommand, channelTestCommand } from "./channels.ts";
import { UsageError, type CommandSpec, type Flags } from "./command_table.ts";
import packageJson from "../../package.json" with { type: "json" };

const SERVE: CommandSpec = {
  name: "serve",
  flags: ["host", "port", "database"],
  synopsis: "serve [--host H] [--port P] [--database URL]",
  help:
    "Runs the API server, the settings area, the scheduler and the delivery worker. The flags override\n" +
    "CERTKEEPER_HOST, CERTKEEPER_PORT and CERTKEEPER_DATABASE_URL. Logs are readable lines on a terminal and\n" +
    "JSON lines otherwise; CERTKEEPER_LOG_FORMAT=json|pretty chooses. Stops cleanly on SIGTERM or Ctrl-C.",
  run: () => Promise.reject(new Error("serve runs in main")),
};

const COMMANDS: CommandSpec[] = [
  SERVE,
  ...ACCOUNT_COMMANDS,
  certificateAddCommand,
  certificateListCommand,
  certificateRemoveCommand,
  channelListCommand,
  channelTestCommand,
  importCommand,
  checkCommand,
  backupCommand,
];

const OPTIONS = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  host: { type: "string" },
  port: { type: "string" },
  database: { type: "string" },
  name: { type: "string" },
  plan: { type: "string" },
  "certificate-limit": { type: "string" },
  "channel-limit": { type: "string" },
  "rate-limit": { type: "string" },
  "watch-limit": { type: "string" },
  org: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  password: { type: "string" },
  user: { type: "string" },
  test: { type: "boolean" },
  id: { type: "string" },
  mode: { type: "string" },
  status: { type: "string" },
  to: { type: "string" },
  protocol: { type: "string" },
  "connect-to": { type: "string" },
  tags: { type: "string" },
  "alert-policy": { type: "string" },
  "if-missing": { type: "boolean" },
  version: { type: "boolean", short: "V" },
} as const;

/** `--version`, wherever it stands: with `--json`, one JSON document like every command's. */
function printVersion(flags: Flags): Promise<number> {
  return print(flags.json ? JSON.stringify({ name: "certkeeper", version: packageJson.version }) : `certkeeper ${packageJson.version}`);
}

function usage(): string {
  return [
    "Usage: certkeeper <command> [flags]",
    "",
    ...COMMANDS.map((c) => `  ${c.synopsis}`),
    "  help [COMMAND]",
    "",
    "Every command but serve takes --json; every command takes --help; --version prints the version.",
    "Wherever an organization or a user is asked for, its id or its unique name (an email, for a user) will do.",
    "Configuration comes from CERTKEEPER_* variables (see README), and from a .env file in the folder it runs in.",
    "Run as: npm run --silent certkeeper -- <command> [flags]",
  ].join("\n");
}

function commandHelp(spec: CommandSpec): string {
  return `Usage: certkeeper ${spec.synopsis}\n\n${spec.help}${spec.name === "serve" ? "" : "\n\n--json prints one JSON document on stdout and nothing else there."}`;
}

/** The command named by the leading positionals: two words first ("org create"), then one ("check"). */
function findCommand(positionals: string[]): { spec: CommandSpec; args: string[] } | null {
  const two = COMMANDS.find((c) => c.name === positionals.slice(0, 2).join(" "));
  if (two) return { spec: two, args: positionals.slice(2) };
  const one = COMMANDS.find((c) => c.name === positionals[0]);
  return one ? { spec: one, args: positionals.slice(1) } : null;
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    const found = findCommand(argv.filter((a) => !a.startsWith("-")));
    const message = (error as Error).message.replace(/\. To specify a positional argument.*$/s, "");
    return found ? usageFailure(found.spec, message) : fail(`${message}\n\n${usage()}`, 2);
  }
  const flags = parsed.values as Flags;
  const positionals = parsed.positionals;

  if (flags.version && (positionals.length === 0 || positionals[0] === "version")) return printVersion(flags);
  if (positionals[0] === "help") {
    if (positionals.length === 1) return print(usage());
    const found = findCommand(positionals.slice(1));
    if (!found || found.args.length > 0) return fail(`No command "${positionals.slice(1).join(" ")}" to explain.\n\n${usage()}`, 2);
    return print(commandHelp(found.spec));
  }
  if (positionals.length === 0) return flags.help ? print(usage()) : fail(usage(), 2);
  const found = findCommand(positionals);
  if (!found) {
    const family = COMMANDS.filter((c) => c.name.startsWith(`${positionals[0]} `));
    const hint = family.length > 0 ? `"${positionals[0]}" takes: ${family.map((c) => c.name).join(", ")}.` : "";
    return fail(`Unknown command "${positionals.join(" ")}". ${hint}\n\n${usage()}`, 2);
  }
  const { spec, args } = found;
  if (flags.help) return print(commandHelp(spec));

  // serve prints log lines, not one document: --json would promise what it does not do.
  const allowed = new Set([...spec.flags, ...(spec.name === "serve" ? [] : ["json"]), "help"]);
  if (flags.version) return printVersion(flags);
  const stray = Object.keys(flags).find((name) => !allowed.has(name));
  if (stray) return usageFailure(spec, `--${stray} is not a flag of ${spec.name}`);
  const positional = spec.positionals ?? { synopsis: "", min: 0, max: 0 };
  if (args.length < positional.min) return usageFailure(spec, `${spec.name} needs ${positional.synopsis}, such as: certkeeper ${spec.name} example.com`);
  if (args.length > positional.max) return usageFailure(spec, `${spec.name} takes no argument "${args[positional.max]}"`);

  let config: Config;
  try {
    config = configFromEnv(process.env);
  } catch (error) {
    if (error instanceof ConfigError) return fail(`Configuration error: ${error.message}`, spec.usageExitCode ?? 2);
    throw error;
  }
  // Read as their variables are, but named as typed: a usage error.
  for (const [flag, read] of [["host", listenHost], ["port", listenPort]] as const) {
    if (typeof flags[flag] !== "string") continue;
    try {
      (config as Record<typeof flag, string | number>)[flag] = read(flags[flag] as string);
    } catch (error) {
      return usageFailure(spec, `--${flag}: ${(error as Error).message}`);
    }
  }
  if (flags.database) config.databaseUrl = flags.database as string;
  if (spec === SERVE) return serve(config);

  try {
    const outcome = await spec.run({
      config,
      flags,
      args,
      readStdin: () => new Response(Bun.stdin.stream()).text(),
      interactive: Boolean(process.stderr.isTTY),
    });
    // What callers of the API typed (names, tags, a server's error) reaches the terminal shown, never acted on.
    const written = await writeOut(flags.json ? JSON.stringify(outcome.json, null, 2) : printable(outcome.text));
    // A note is one line (one per target): a line break a server put in its error shows as \x0a.
    for (const note of outcome.notes ?? []) console.error(printable(note, false));
    if (!written) return spec === checkCommand ? 3 : 1;
    return outcome.exitCode ?? 0;
  } catch (error) {
    if (error instanceof UsageError) return usageFailure(spec, error.message);
    // check's failures to run at all (a bad CERTKEEPER_EXTRA_CA_FILE) are "unknown", 3, as a plugin's.
    const failed = spec === checkCommand ? 3 : 1;
    if (error instanceof CertkeeperError) return fail(error.message, failed);
    return fail(`certkeeper ${spec.name} failed: ${(error as Error).message}`, failed);
  }
}

async function serve(config: Config): Promise<number> {
  // Listened for before anything starts: /healthz may answer while start-up still works (the first
  // start's instructions read the database), and a SIGTERM then must still stop the server cleanly.
  let stopRequested!: () => void;
  const stopping = new Promise<void>((resolve) => (stopRequested = resolve));
  const shutdown = () => {
    process.off("SIGTERM", shutdown);
    process.off("SIGINT", shutdown);
    stopRequested();
  };
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  let server;
  try {
    // A missing or unreadable CA file is named by its variable, before anything starts.
    if (config.extraCaFile) await loadTrust(config);
    // Loaded here: the HTTP server and the settings area are half of the CLI's start-up time, and
    // only serve needs them (cron jobs run check and list commands many times a day).
    const { startServer } = await import("../elysia/server.ts");
    const { createLogger } = await import("../../core/base/mod.ts");
    const { resolveLogFormat } = await import("../wiring/mod.ts");
    const logger = createLogger(config.logLevel, { format: resolveLogFormat(config.logFormat) });
    // A stop asked for while start-up still waits (for a database server, say) is a stop: nothing is
    // served yet (but /healthz), and the process ends. Once the API listens, the start is finished and
    // stopped cleanly.
    let listening = false;
    const starting = startServer(config, { logger }, { onListening: () => (listening = true) });
    const first = await Promise.race([starting, stopping.then(() => null)]);
    if (first === null && !listening) {
      logger.info("certkeeper stopped", { during: "start-up: nothing was served but /healthz" });
      return 0;
    }
    server = first ?? (await starting);
  } catch (error) {
    shutdown();
    // A busy port or an unreachable database: say so in one line, not with a stack trace.
    return fail(`certkeeper could not start: ${(error as Error).message}`, 1);
  }
  await stopping;
  try {
    await server.stop();
  } catch (error) {
    console.error(`certkeeper: error while stopping: ${(error as Error).message}`);
  }
  return 0;
}

async function print(text: string): Promise<number> {
  return (await writeOut(text)) ? 0 : 1;
}

/**
 * Writes `text` and a line break to stdout, whole. A write that fails (a full disk: a new key shown
 * once would be lost) is said on stderr and makes the exit code non-zero; a reader that has read all
 * it wanted (`| head`) is not a failure.
 */
async function writeOut(text: string): Promise<boolean> {
  try {
    await Bun.write(Bun.stdout, `${text}\n`);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === "EPIPE") return true;
    console.error(`Error: the output could not be written: ${(error as Error).message}`);
    return false;
  }
}

function usageFailure(spec: CommandSpec, message: string): number {
  return fail(`Error: ${message}\n\nUsage: certkeeper ${spec.synopsis}\nMore: certkeeper help ${spec.name}`, spec.usageExitCode ?? 2);
}

function fail(message: string, code: number): number {
  console.error(printable(message.startsWith("Usage") || message.startsWith("Error:") || message.includes("\n\nUsage") ? message : `Error: ${message}`));
  return code;
}

process.exitCode = await main(process.argv.slice(2)).catch((error) => {
  // Nothing should reach here; if it does, one line, never a stack trace on the user's terminal.
  console.error(`certkeeper: unexpected error: ${(error as Error).message ?? error}`);
  return 1;
});
process.exit(process.exitCode);
