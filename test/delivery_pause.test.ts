/**
 * A server process stopped (SIGSTOP) while it waits for a receiver's answer, and continued after more
 * than the attempt timeout: the answer that arrived during the pause counts, so the receiver gets the
 * alert once and the delivery shows one attempt. (A GC pause, a suspended VM or a slow disk does this.)
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DAY, HOUR } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { startServe, tempWorkspace } from "./support/cli.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(40_000);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

test("a server paused mid-delivery past the attempt timeout delivers once: one request, attempts 1", async () => {
  const { root, rsaIntermediate } = await testPki();
  const ws = tempWorkspace("certkeeper-pause-");
  cleanups.push(() => ws.cleanup());
  writeFileSync(join(ws.dir, "root.pem"), root.certPem);
  const env = {
    ...ws.env,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    // Fixed-day thresholds (Part I): a 5-day certificate raises one certificate.expiring.
    CERTKEEPER_ALERT_POLICY: "days",
    CERTKEEPER_EXTRA_CA_FILE: join(ws.dir, "root.pem"),
    // A second and a half beyond the receiver's answer: on a busy machine its timer may fire late.
    CERTKEEPER_DELIVERY_TIMEOUT: "3s",
    // A timed-out attempt would be retried 1 s later: a copy would show within the test.
    CERTKEEPER_DELIVERY_RETRY: "1s,1s",
  };
  const { key } = await seedOwner(ws.env.CERTKEEPER_DATABASE_URL!);

  const domain = `pause.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 5 * DAY + HOUR) });
  const site = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const receiver = await startHttpReceiver();
  receiver.answer = () => ({ status: 200, delayMs: 1500 });
  const server = await startServe({ env });
  cleanups.push(() => site.close(), () => receiver.close(), () => server.stop("SIGKILL"));

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  expect((await call("POST", "/v1/channels", { type: "webhook", name: "Slow", config: { url: `${receiver.url}/slow` } })).status).toBe(201);
  expect((await call("POST", "/v1/certificates", { domain, port: site.port })).status).toBe(201);

  // The request has arrived; the answer comes 1.5 s later, while the server stands still for 6 s: on
  // waking, its attempt's timer is 3 s overdue.
  await receiver.waitFor(1, 10_000);
  process.kill(server.pid, "SIGSTOP");
  try {
    await Bun.sleep(6000);
  } finally {
    process.kill(server.pid, "SIGCONT");
  }
  // Long enough for a retry (1 s) of an attempt that would have been counted as timed out.
  await Bun.sleep(3000);

  expect(receiver.requests).toHaveLength(1);
  const events = (await call("GET", "/v1/events")).body.data;
  expect(events.map((e: any) => ({ type: e.type, deliveries: e.deliveries.map((d: any) => ({ status: d.status, attempts: d.attempts })) }))).toEqual([
    { type: "certificate.expiring", deliveries: [{ status: "delivered", attempts: 1 }] },
  ]);
});
