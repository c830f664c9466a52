/**
 * A running certkeeper server: the libSQL store, core, the Elysia app on Bun, background work.
 *
 * @example
 * const server = await startServer(configFromEnv(process.env));
 * console.log(server.url);
 * await server.stop();
 */
import http from "node:http";
import type { Config } from "../../core/config/mod.ts";
import type { Core } from "../../core/app/mod.ts";
import { wire, type WireOptions } from "../wiring/mod.ts";
import { bunPasswords } from "../bun/passwords.ts";
import { createHttpApp } from "./app.ts";

export interface RunningServer {
  url: string;
  port: number;
  core: Core;
  /** Stops accepting, finishes in-flight requests and checks, closes the store. */
  stop(): Promise<void>;
}

/** What to use instead of the defaults: a store of yours (not closed by stop()), a logger, trusted roots, … */
export type ServerOptions = Omit<WireOptions, "outboxDir">;

/**
 * Most bytes of request line and headers Bun reads before answering a bare 431 itself (its default is
 * 16 KiB). Raised so that a long URL or header reaches core and is answered in CONTRACT §4's envelope
 * (a query over core's MAX_QUERY_BYTES: 400 invalid_request); only beyond this is the answer Bun's.
 */
export const MAX_HEADER_BYTES = 256 * 1024;

export async function startServer(config: Config, options: ServerOptions = {}): Promise<RunningServer> {
  const wired = await wire(config, { passwords: bunPasswords, ...options });
  const { core, logger, store } = wired;
  const app = createHttpApp(core);
  // Bun.serve reads node:http's process-wide limit (set before listening; it only ever grows here).
  if (http.maxHeaderSize < MAX_HEADER_BYTES) (http as { maxHeaderSize: number }).maxHeaderSize = MAX_HEADER_BYTES;
  // reusePort off: a second server on the same port must fail to start, not silently take half the traffic.
  app.listen({ hostname: config.host, port: config.port, idleTimeout: 30, reusePort: false });
  const server = app.server!;
  core.start();
  const url = `http://${server.hostname}:${server.port}`;
  logger.info("certkeeper is listening", { url, database: redactDatabaseUrl(config.databaseUrl) });
  if ((await store.organizations.list()).length === 0) {
    logger.info("The database is empty: create the first organization and its owner, then sign in", {
      commands: [
        "npm run --silent certkeeper -- org create --name 'My org'",
        "npm run --silent certkeeper -- user create --org ORG_ID --email you@example.com --role owner --password -",
      ],
      then:
        "Put the id org create printed in place of ORG_ID (org list shows it again). The second command reads the " +
        "password (at least 10 characters): type it (it is not shown) and press Enter.",
      signIn: `${url}/sign-in`,
    });
  }
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

/** The database URL without credentials, for logs. */
export function redactDatabaseUrl(url: string): string {
  return url.replace(/\/\/[^@/]*@/, "//***@").replace(/([?&](authToken|token)=)[^&]*/gi, "$1***");
}
