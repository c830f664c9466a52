/**
 * The floor of the API benchmark, in a process of its own: a bare Elysia server answering
 * `GET /v1/certificates/:id` and `GET /v1/certificates` with the bodies certkeeper gave (read from the
 * JSON file named by argv[2]), and any other GET with the list page, from memory: no authentication,
 * no rate limit, no database, no logs.
 * Prints `{ "port": … }` as one line, serves until killed.
 */
import { readFileSync } from "node:fs";
import { Elysia } from "elysia";

const { bodies, page } = JSON.parse(readFileSync(process.argv[2]!, "utf8")) as { bodies: Record<string, unknown>; page: unknown };
const app = new Elysia()
  .get("/v1/certificates/:id", ({ params }) => bodies[params.id] ?? page)
  .get("/v1/certificates", () => page)
  // Any other read (bench/load.ts's mix): the same fixed page.
  .get("/*", () => page)
  .listen({ hostname: "127.0.0.1", port: 0 });
console.log(JSON.stringify({ port: app.server!.port }));
