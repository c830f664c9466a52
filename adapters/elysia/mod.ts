/**
 * The HTTP face of certkeeper, the package export `certkeeper/elysia`: createHttpApp mounts a core on
 * an Elysia app; startServer runs the whole server (libSQL store, transports, background work) as
 * `certkeeper serve` does.
 *
 * @example
 * const app = createHttpApp(core);
 * const response = await app.handle(new Request("http://localhost/healthz"));
 *
 * @example
 * const server = await startServer(configFromEnv(process.env));
 * await server.stop();
 */
export { createHttpApp } from "./app.ts";
export { startServer, type RunningServer, type ServerOptions } from "./server.ts";
