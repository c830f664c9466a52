/**
 * CONTRACT §10: SIGTERM: stop accepting, finish in-flight requests and checks, exit 0. A SIGTERM that
 * arrives once the server listens and core runs, but before start-up has finished (its last step reads
 * the organizations for the first-start hint, a round trip to a database server), stops the server
 * cleanly: the request in flight then is answered.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { CLI_MAIN, freePort } from "./support/cli.ts";
import { startSqld, type SqldServer } from "./support/sqld.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(60_000);

let sqld: SqldServer;
let proxy: ReturnType<typeof Bun.serve>;
let holding = false;
const held: Array<() => void> = [];

beforeAll(async () => {
  sqld = await startSqld();
  // A proxy in front of the database server that, when told to, holds every request reading the
  // organizations (the first-start hint's list, and a key's grant) until the test lets them go.
  proxy = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const body = await request.arrayBuffer();
      const text = new TextDecoder().decode(body);
      if (holding && /organizations/.test(text)) await new Promise<void>((resolve) => held.push(resolve));
      const url = new URL(request.url);
      const upstream = await fetch(`${sqld.url}${url.pathname}${url.search}`, { method: request.method, headers: { "content-type": request.headers.get("content-type") ?? "application/json", ...(request.headers.get("authorization") ? { authorization: request.headers.get("authorization")! } : {}) }, body: body.byteLength ? body : undefined });
      return new Response(await upstream.arrayBuffer(), { status: upstream.status, headers: { "content-type": upstream.headers.get("content-type") ?? "application/json" } });
    },
  });
});
afterAll(async () => {
  for (const release of held.splice(0)) release();
  proxy?.stop(true);
  await sqld?.close();
});

test("a SIGTERM while start-up's last read is out: the request in flight is answered and the process exits 0", async () => {
  const { key } = await seedOwner(sqld.url);
  const databaseUrl = `http://127.0.0.1:${proxy.port}`;
  const port = await freePort();
  holding = true;
  const child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CERTKEEPER_DATABASE_URL: databaseUrl, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "error" },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    // Listening (health answers) while start-up waits for its list of organizations.
    let up = false;
    for (let i = 0; i < 200 && !up; i++) {
      up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (!up) await Bun.sleep(50);
    }
    expect(up).toBe(true);
    for (let i = 0; i < 100 && held.length === 0; i++) await Bun.sleep(20);
    expect(held.length).toBeGreaterThan(0);
    // A request in flight (its key's grant is read from the database, held too).
    const inFlight = fetch(`http://127.0.0.1:${port}/v1/certificates`, { headers: { authorization: `Bearer ${key}` } }).then(
      (r) => r.status,
      (error) => `no answer: ${(error as Error).message}`,
    );
    for (let i = 0; i < 100 && held.length < 2; i++) await Bun.sleep(20);
    child.kill("SIGTERM");
    await Bun.sleep(500);
    holding = false;
    for (const release of held.splice(0)) release();
    expect(await inFlight).toBe(200);
    const exited = await Promise.race([child.exited, Bun.sleep(10_000).then(() => "still running")]);
    expect(exited).toBe(0);
  } finally {
    holding = false;
    for (const release of held.splice(0)) release();
    child.kill("SIGKILL");
    await child.exited;
  }
});
