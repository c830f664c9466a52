/**
 * An import's items are judged in any order (retrievals run side by side) and written in item order:
 * their events are stamped when written, so the events list (newest first) is in time order too, as it
 * is for every other event. A client that keeps the last `createdAt` it saw as its bookmark skips none.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import tls from "node:tls";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let slow: tls.Server;
let fast: tls.Server;
const port = (server: tls.Server) => (server.address() as { port: number }).port;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  // Expired certificates: each item's add raises certificate.expired.
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.order.${TEST_DOMAIN}`], notAfter: new Date(Date.now() - 2 * DAY) });
  const context = { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
  // The slow server answers its handshake after 400 ms: the first item finishes after the second.
  slow = tls.createServer({ ...context, SNICallback: (_name, done) => setTimeout(() => done(null, tls.createSecureContext(context)), 400) }, (socket) => socket.end());
  fast = tls.createServer(context, (socket) => socket.end());
  for (const server of [slow, fast]) {
    server.on("tlsClientError", () => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  }
  h = await createHarness({ store: "libsql" });
});
afterAll(async () => {
  await h?.close();
  slow?.close();
  fast?.close();
});

test("events of items judged out of order are listed newest first by time as by position", async () => {
  const certificates = [
    { domain: `a.order.${TEST_DOMAIN}`, port: port(slow) },
    { domain: `b.order.${TEST_DOMAIN}`, port: port(fast) },
    { domain: `c.order.${TEST_DOMAIN}`, port: port(fast) },
  ];
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates } }), 202);
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("finished");
  const events = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as Array<{ type: string; createdAt: string; data: { certificate: { domain: string } } }>;
  const expired = events.filter((event) => event.type === "certificate.expired");
  // Written in item order: the last item's event is the newest.
  expect(expired.map((event) => event.data.certificate.domain)).toEqual(certificates.map((c) => c.domain).reverse());
  const times = expired.map((event) => Date.parse(event.createdAt));
  expect(times).toEqual([...times].sort((x, y) => y - x));
});
