/**
 * SIGTERM (CONTRACT §10): a real `certkeeper serve` stops accepting at once, finishes the request and the
 * scheduled check it has in flight (each waiting out a 4 s TLS timeout on a silent server), starts no
 * new check meanwhile, and exits 0.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startSilentServer, startTlsServer, type TestServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { seedOwner } from "./support/accounts.ts";

const ws = tempWorkspace("certkeeper-shutdown-");
let serve: ServeProcess | undefined;
let tls: TlsTestServer | undefined;
const silent: TestServer[] = [];

/** A server on `port` that accepts connections and never says a word. */
async function silentOn(port: number): Promise<TestServer> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(port, "127.0.0.1", () => resolve()));
  return {
    port,
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

const refused = (url: string) =>
  fetch(`${url}/healthz`).then(
    () => false,
    (error: { code?: string }) => error.code === "ConnectionRefused" || error.code === "ECONNREFUSED",
  );

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  const caFile = join(ws.dir, "ca.pem");
  writeFileSync(caFile, root.certPem);
  const domain = `watched.shutdown.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});

afterAll(async () => {
  await serve?.stop("SIGKILL");
  await Promise.all([tls?.close(), ...silent.map((s) => s.close())]);
  ws.cleanup();
});

test("SIGTERM: new connections are refused at once, the in-flight request and check finish, no new check starts, exit 0", async () => {
  const env = {
    ...ws.env,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    // Fixed-day thresholds (Part I): a 5-day certificate raises one certificate.expiring.
    CERTKEEPER_ALERT_POLICY: "days",
    CERTKEEPER_EXTRA_CA_FILE: join(ws.dir, "ca.pem"),
    // Margins for a busy machine: the check under way at SIGTERM must still be hanging then.
    CERTKEEPER_TLS_TIMEOUT: "4s",
    CERTKEEPER_CHECK_INTERVAL: "500ms",
    CERTKEEPER_LOG_LEVEL: "info",
  };
  const { key } = await seedOwner(ws.env.CERTKEEPER_DATABASE_URL!, { name: "Shutdown", email: "owner@shutdown.test" });
  serve = await startServe({ env, cwd: ws.dir });
  const post = (domain: string, port: number) =>
    fetch(`${serve!.url}/v1/certificates`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ domain, port }),
    });

  // A monitored certificate whose server goes silent: its next scheduled check hangs for the 4 s timeout.
  const watchedPort = tls!.port;
  expect((await post(`watched.shutdown.${TEST_DOMAIN}`, watchedPort)).status).toBe(201);
  await tls!.close();
  tls = undefined;
  const watched = await silentOn(watchedPort);
  silent.push(watched);
  await until(() => watched.connections() > 0, "a scheduled check of the silent certificate");

  // 1.5 s later, a request that takes 4 s: it outlasts the check, so the drain spans the next due check.
  await Bun.sleep(1500);
  const mute = await startSilentServer();
  silent.push(mute);
  const inFlight = post(`mute.shutdown.${TEST_DOMAIN}`, mute.port);
  await until(() => mute.connections() > 0, "the request's retrieval to start");

  const signalledAt = Date.now();
  const checksBefore = watched.connections();
  const exited = serve.stop("SIGTERM", 15_000);
  await until(() => refused(serve!.url), "new connections to be refused", 1000);
  const refusedAfterMs = Date.now() - signalledAt;

  const response = await inFlight;
  const answeredAfterMs = Date.now() - signalledAt;
  expect({ status: response.status, body: await response.json() }).toEqual({
    status: 422,
    body: { error: { code: "certificate_not_found", message: expect.stringContaining(`mute.shutdown.${TEST_DOMAIN}`) } },
  });
  expect(response.headers.get("x-request-id")).toMatch(/^req_/);
  expect(refusedAfterMs).toBeLessThan(answeredAfterMs);

  expect(await exited).toBe(0);
  expect(watched.connections()).toBe(checksBefore);
  const { stdout, stderr } = serve.output();
  expect(stderr).toBe("");
  const lines = stdout.trim().split("\n").map((line) => JSON.parse(line));
  expect(lines.filter((line) => line.level === "error")).toEqual([]);
  expect(lines.at(-1).msg).toBe("certkeeper stopped");

  // The check that was in flight at SIGTERM was saved before the store closed.
  const store = await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! });
  try {
    const [record] = await store.certificates.listAll({ limit: 10 });
    expect(record!.domain).toBe(`watched.shutdown.${TEST_DOMAIN}`);
    expect(record!.lastCheckedAt).toBeGreaterThan(signalledAt);
    expect(record!.failureCount).toBeGreaterThan(0);
  } finally {
    await store.close();
  }
}, 30_000);
