/**
 * A running certkeeper server: the libSQL store, core, the Elysia app on Bun, background work.
 *
 * @example
 * const server = await startServer(configFromEnv(process.env));
 * console.log(server.url);
 * await server.stop();
 */
import http from "node:http";
import { resolve } from "node:path";
import type { Server } from "bun";
import { CertkeeperError, createLogger, errorBody, newId, type Logger } from "../../core/base/mod.ts";
import { requestLine } from "../../core/http/mod.ts";
import { changedSettings, maskUrl, type Config } from "../../core/config/mod.ts";
import type { Core } from "../../core/app/mod.ts";
import { resolveLogFormat, wire, type WireOptions } from "../wiring/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";
import { createHttpApp } from "./app.ts";

export interface RunningServer {
  url: string;
  port: number;
  core: Core;
  /** Stops accepting, finishes in-flight requests and checks, closes the store. */
  stop(): Promise<void>;
}

/** What to use instead of the defaults: a store of yours (closed by stop(), as the server's own store is), a logger, trusted roots, … */
export type ServerOptions = Omit<WireOptions, "outboxDir">;

/**
 * Most bytes of request line and headers Bun reads before answering a bare 431 itself (its default is
 * 16 KiB). Raised so that a long URL or header reaches core and is answered in CONTRACT §4's envelope
 * (a query over core's MAX_QUERY_BYTES: 400 invalid_request); only beyond this is the answer Bun's.
 */
export const MAX_HEADER_BYTES = 256 * 1024;

export async function startServer(config: Config, options: ServerOptions = {}, hooks: { onListening?: () => void } = {}): Promise<RunningServer> {
  // The port is taken first: a busy one is said at once, and while the database is opened (a server
  // waited for, another process's upgrade waited out: up to minutes) /healthz says the process is up.
  const logger = options.logger ?? createLogger(config.logLevel, { format: resolveLogFormat(config.logFormat) });
  const starting = listenWhileStarting(config, logger);
  let wired;
  try {
    wired = await wire(config, { passwords: bunPasswords, ...options, logger });
  } catch (error) {
    starting.stop(true);
    throw error;
  }
  const { core, store } = wired;
  const app = createHttpApp(core);
  // Bun.serve reads node:http's process-wide limit (set before listening; it only ever grows here).
  if (http.maxHeaderSize < MAX_HEADER_BYTES) (http as { maxHeaderSize: number }).maxHeaderSize = MAX_HEADER_BYTES;
  // The same port (the one chosen, for port 0), handed over from the listener of the start.
  const port = starting.port!;
  // Compiled before the hand-over (listen would otherwise compile while nothing listens): the port
  // then refuses connections for the few milliseconds Bun takes to listen anew.
  app.compile();
  // Not forced: a probe being answered is answered (each answer closes its connection, so none is reused).
  void starting.stop();
  // reusePort off: a second server on the same port must fail to start, not silently take half the traffic.
  try {
    app.listen({ hostname: config.host, port, idleTimeout: 30, reusePort: false });
  } catch (error) {
    await wired.release();
    throw portError(config, error);
  }
  const server = app.server!;
  hooks.onListening?.();
  core.start();
  // An IPv6 address in a URL is written in brackets (http://[::1]:3000): printed so, it can be opened.
  const url = `http://${server.hostname?.includes(":") ? `[${server.hostname}]` : server.hostname}:${server.port}`;
  logger.info("certkeeper is listening", { url, database: maskUrl(config.databaseUrl) });
  const changed = changedSettings(config);
  logger.info(Object.keys(changed).length === 0 ? "settings: every one at its default" : "settings that differ from the defaults", changed);
  if ((await store.organizations.list()).length === 0) logger.info(...firstStartHint(config, url));
  let stopping: Promise<void> | undefined;
  return {
    url,
    port: server.port!,
    core,
    stop() {
      stopping ??= (async () => {
        // Stop accepting and stop claiming background work at the same moment, then wait for both:
        // Bun's server.stop(false) closes the listener and idle keep-alive connections at once and
        // resolves when every in-flight request is answered; core.stop() waits for the checks and
        // deliveries in flight. (One after the other, the scheduler kept starting checks while
        // requests drained, and each made the exit wait one more TLS timeout.)
        await Promise.all([server.stop(false), core.stop()]);
        // Keys used by requests that were still being answered while core stopped.
        await core.services.authenticator.flushUsage().catch((error) => logger.warn("could not record API key use", { error }));
        await wired.release();
        // The server has always closed its store on stop, a store handed to it included.
        if (typeof options.store === "object") await options.store.close();
        logger.info("certkeeper stopped");
      })();
      return stopping;
    },
  };
}

/**
 * What to do on the first start with an empty database: the CLI commands, against the database this
 * server uses (a custom one named in them, a relative file made absolute, so they work from anywhere).
 */
export function firstStartHint(config: Config, url: string): [string, Record<string, unknown>] {
  const database = commandDatabaseUrl(config.databaseUrl);
  const prefix = database === null ? "" : `CERTKEEPER_DATABASE_URL='${maskUrl(database)}' `;
  const cli = `${prefix}npm run --silent certkeeper --`;
  const credentials = database !== null && maskUrl(database) !== database;
  return [
    "The database is empty: create the first organization and its owner, then sign in",
    {
      commands: [`${cli} org create --name 'My org'`, `${cli} user create --org 'My org' --email you@example.com --role owner --password -`],
      then:
        "Run them in certkeeper's folder. The second reads the password (at least 10 characters): type it (it is not shown) and press Enter." +
        (credentials ? " Put the database's credentials where the URL shows ********." : "") +
        (config.databaseAuthToken ? " Set CERTKEEPER_DATABASE_AUTH_TOKEN as for the server." : ""),
      database: maskUrl(config.databaseUrl),
      signIn: `${url}/sign-in`,
    },
  ];
}

/** The database URL the CLI needs to reach this server's database; null for the default (nothing to set). */
function commandDatabaseUrl(databaseUrl: string): string | null {
  if (databaseUrl === "file:./data/certkeeper.db") return null;
  // A relative file is relative to where the server runs: made absolute, the command works from anywhere.
  const file = /^file:(?!\/)(.+)$/.exec(databaseUrl);
  return file ? `file:${resolve(file[1]!)}` : databaseUrl;
}

/**
 * The port's listener until the service is built: `/healthz` 200 (the process is up), `/readyz` and
 * every other request 503, saying the database is being opened, with `Retry-After`; each with its
 * request line, as the API's (a probe's at debug).
 */
function listenWhileStarting(config: Config, logger: Logger): Server<undefined> {
  const starting = "certkeeper is starting: its database is being opened (another process may be upgrading it).";
  const answer = (request: Request, started: number, status: number, body: unknown, headers: Record<string, string> = {}, code?: string) => {
    const requestId = newId("req");
    const probe = /^\/(healthz|readyz)$/.test(new URL(request.url).pathname);
    const level = probe ? "debug" : "info";
    if (logger.enabled(level)) logger[level]("request", { ...requestLine(request, status, requestId, started), ...(code ? { code } : {}) });
    return new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8", "x-request-id": requestId, connection: "close", ...headers },
    });
  };
  try {
    return Bun.serve({
      hostname: config.host,
      port: config.port,
      reusePort: false,
      fetch(request) {
        const started = performance.now();
        const path = new URL(request.url).pathname;
        if ((path === "/healthz" || path === "/readyz") && request.method !== "GET" && request.method !== "HEAD") {
          const refused = new CertkeeperError("method_not_allowed", `${request.method} is not allowed on "${path}": use GET.`);
          return answer(request, started, 405, errorBody(refused), { allow: "GET" }, refused.code);
        }
        if (path === "/healthz") return answer(request, started, 200, { status: "ok" });
        if (path === "/readyz") return answer(request, started, 503, { status: "unavailable", reason: starting }, { "retry-after": "5" });
        const refused = new CertkeeperError("storage_unavailable", `${starting} Retry in a few seconds.`);
        return answer(request, started, 503, errorBody(refused), { "retry-after": "5" }, refused.code);
      },
    });
  } catch (error) {
    throw portError(config, error);
  }
}

/** A listen that failed, in one sentence; a port in use names the variable that chooses another. */
function portError(config: Config, error: unknown): Error {
  const message = (error as Error)?.message ?? String(error);
  if ((error as { code?: string })?.code === "EADDRINUSE" || /in use|EADDRINUSE/i.test(message)) {
    return new Error(
      `port ${config.port} on ${config.host} is in use by another process: stop that process, or choose another port with ` +
        `CERTKEEPER_PORT (for example CERTKEEPER_PORT=${config.port === 65535 ? 3001 : config.port + 1} npm start)`,
    );
  }
  // A name that does not resolve, or an address this machine does not have.
  return new Error(`cannot listen on ${config.host} port ${config.port} (CERTKEEPER_HOST, CERTKEEPER_PORT): ${message}`);
}

