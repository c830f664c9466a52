/**
 * The port's listener while the database is still being opened at start (adapters/elysia/server.ts):
 * HEAD is a probe like GET, another method on a probe path is 405 with `Allow: GET`, and probes'
 * request lines are at debug (a load balancer's probes every few seconds would fill the info log).
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { CLI_MAIN, freePort } from "./support/cli.ts";
import { until } from "./support/until.ts";

setDefaultTimeout(30_000);
let child: ReturnType<typeof Bun.spawn> | undefined;
afterAll(async () => {
  child?.kill("SIGKILL");
  await child?.exited;
});

test("while a database server is waited for: HEAD /healthz 200, POST /healthz 405 Allow GET, and only non-probe requests logged at info", async () => {
  const port = await freePort();
  const closed = await freePort(); // nothing listens there: the server waits for it
  child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "",
      CERTKEEPER_DATABASE_URL: `http://127.0.0.1:${closed}`,
      CERTKEEPER_PORT: String(port),
      CERTKEEPER_LOG_LEVEL: "info",
      CERTKEEPER_LOG_FORMAT: "json",
      CERTKEEPER_DNS_SERVERS: "off",
    },
    stdout: "pipe",
    stderr: "ignore",
  });
  let output = "";
  void (async () => {
    for await (const chunk of child!.stdout as ReadableStream<Uint8Array>) output += new TextDecoder().decode(chunk);
  })();
  const base = `http://127.0.0.1:${port}`;
  await until("the starting listener", () => fetch(`${base}/healthz`).then((r) => r.status === 200, () => false), 10_000);

  const head = await fetch(`${base}/healthz`, { method: "HEAD" });
  expect(head.status).toBe(200);
  // Each answer closes its connection: none is reused across the hand-over to the API.
  expect(head.headers.get("connection")).toBe("close");
  const post = await fetch(`${base}/healthz`, { method: "POST" });
  expect({ status: post.status, allow: post.headers.get("allow"), code: ((await post.json()) as { error: { code: string } }).error.code }).toEqual({
    status: 405,
    allow: "GET",
    code: "method_not_allowed",
  });

  // A request that is not a probe is logged at info; the probes before it were not.
  await fetch(`${base}/v1/certificates`);
  const requests = await until(
    "the API request's line",
    async () => {
      const lines = output.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>);
      const found = lines.filter((l) => l.msg === "request");
      return found.some((l) => JSON.stringify(l).includes("/v1/certificates")) ? found : null;
    },
    10_000,
  );
  expect(requests.filter((l) => JSON.stringify(l).includes("/healthz"))).toEqual([]);
  expect(requests.length).toBeGreaterThan(0);
});
