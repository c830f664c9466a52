/**
 * `certkeeper <command> [flags]`: run the server, manage organizations, users and keys, check a
 * domain. With `--json` a command prints exactly one JSON document on stdout; errors go to stderr
 * with a non-zero exit (1: the command failed, 2: it was called wrongly).
 */
import { parseArgs } from "node:util";
import { configFromEnv, ConfigError, type Config } from "../../core/config/mod.ts";
import { CertkeeperError } from "../../core/base/mod.ts";
import { check, keyCreate, keyList, keyRevoke, orgCreate, userCreate, UsageError, type CommandResult, type Flags } from "./commands.ts";
import { startServer } from "../elysia/server.ts";

const USAGE = `Usage: certkeeper <command> [flags]

  serve [--host H] [--port P] [--database URL]     run the API server
  org create --name N [--plan free|pro|enterprise]
             [--certificate-limit N] [--channel-limit N] [--rate-limit N]
  user create --org ORG_ID --email E --role owner|admin|member [--password P|-]
  key create --user USER_ID --name N [--test]
  key revoke --id KEY_ID
  key list --org ORG_ID
  check DOMAIN[:PORT]

Every command but serve takes --json. Configuration comes from CERTKEEPER_* variables (see README).`;

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
  org: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  password: { type: "string" },
  user: { type: "string" },
  test: { type: "boolean" },
  id: { type: "string" },
} as const;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return fail(`${(error as Error).message}\n\n${USAGE}`, 2);
  }
  const flags = parsed.values as Flags;
  const [command, sub, ...rest] = parsed.positionals;
  if (flags.help) {
    console.log(USAGE);
    return 0;
  }
  // No command is a usage error: the usage goes to stderr, stdout stays empty.
  if (!command) return fail(USAGE, 2);
  let config: Config;
  try {
    config = configFromEnv(process.env);
    if (flags.host) config.host = flags.host as string;
    if (flags.port) config.port = Number(flags.port);
    if (flags.database) config.databaseUrl = flags.database as string;
  } catch (error) {
    if (error instanceof ConfigError) return fail(`Configuration error: ${error.message}`, 2);
    throw error;
  }
  if (command === "serve") return serve(config);

  const name = command === "check" ? "check" : `${command} ${sub ?? ""}`.trim();
  const run: Record<string, () => Promise<CommandResult>> = {
    "org create": () => orgCreate(config, flags),
    "user create": () => userCreate(config, flags, () => new Response(Bun.stdin.stream()).text()),
    "key create": () => keyCreate(config, flags),
    "key revoke": () => keyRevoke(config, flags),
    "key list": () => keyList(config, flags),
    check: () => check(config, sub),
  };
  const commandFn = run[name];
  if (!commandFn || (command === "check" ? rest.length > 0 : rest.length > 0)) {
    return fail(`Unknown command "${[command, sub, ...rest].filter(Boolean).join(" ")}"\n\n${USAGE}`, 2);
  }
  try {
    const result = await commandFn();
    console.log(flags.json ? JSON.stringify(result.json, null, 2) : result.text);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) return fail(`${error.message}\n\n${USAGE}`, 2);
    if (error instanceof CertkeeperError) return fail(error.message, 1);
    return fail(`certkeeper ${name} failed: ${(error as Error).message}`, 1);
  }
}

async function serve(config: Config): Promise<number> {
  let server;
  try {
    server = await startServer(config);
  } catch (error) {
    // A busy port or an unreachable database: say so in one line, not with a stack trace.
    return fail(`certkeeper could not start: ${(error as Error).message}`, 1);
  }
  await new Promise<void>((resolve) => {
    const shutdown = () => {
      process.off("SIGTERM", shutdown);
      process.off("SIGINT", shutdown);
      server.stop().then(resolve, (error) => {
        console.error(`certkeeper: error while stopping: ${(error as Error).message}`);
        resolve();
      });
    };
    process.on("SIGTERM", shutdown);
    process.on("SIGINT", shutdown);
  });
  return 0;
}

function fail(message: string, code: number): number {
  console.error(message.startsWith("Usage") || message.includes("\n\nUsage") ? message : `Error: ${message}`);
  return code;
}

process.exitCode = await main(process.argv.slice(2)).catch((error) => {
  console.error(`certkeeper: ${(error as Error).stack ?? error}`);
  return 1;
});
process.exit(process.exitCode);
