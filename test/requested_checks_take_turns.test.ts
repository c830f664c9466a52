/**
 * Checks asked for through the API (an add, "check now", a PATCH that re-checks, the console's "Check
 * now") share one budget of CERTKEEPER_CHECK_CONCURRENCY connections across organizations. One
 * organization decides what its checks cost: a name behind many addresses (CONTRACT §11), one
 * answering and the others accepting and never answering, takes the whole budget for a whole TLS time
 * limit. Organizations waiting for the budget take turns, so that another organization's add waits for
 * one such check at most, not for every one queued before it.
 *
 * Scaled down: a budget of 4, names behind 4 loopback addresses (1 answering, 3 silent), a 500 ms time
 * limit, 8 "check now" requests of one organization in flight while another adds a certificate.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import { DAY } from "../core/base/time.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const ZONE = `fair.${TEST_DOMAIN}`;
const SILENT = ["127.0.0.2", "127.0.0.3", "127.0.0.4"];
const TLS_TIMEOUT_MS = 500;
const HOSTILE = 12;

let tlsServer: TlsTestServer;
const silentServers: net.Server[] = [];
const silentSockets = new Set<net.Socket>();
let h: Harness;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${ZONE}`, `*.multi.${ZONE}`], notAfter: new Date(Date.now() + 90 * DAY) });
  tlsServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  // The same port on three more loopback addresses: accepts, never answers.
  for (const host of SILENT) {
    const server = net.createServer((socket) => {
      silentSockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => silentSockets.delete(socket));
    });
    await new Promise<void>((resolve) => server.listen(tlsServer.port, host, resolve));
    silentServers.push(server);
  }
  h = await createHarness({
    store: "libsql",
    config: {
      checkConcurrency: 4,
      tlsTimeoutMs: TLS_TIMEOUT_MS,
      // The hostile organization's names have four addresses (its own DNS); everything else one.
      resolve: parseResolveRules(`*.multi.${ZONE}=127.0.0.1|${SILENT.join("|")},*.${TEST_DOMAIN}=127.0.0.1`),
    },
  });
});

afterAll(async () => {
  await h?.close();
  for (const socket of silentSockets) socket.destroy();
  await Promise.all(silentServers.map((server) => new Promise((resolve) => server.close(resolve))));
  await tlsServer.close();
});

test("another organization's add is not queued behind one organization's slow manual checks", async () => {
  const seeded = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `h0.multi.${ZONE}`, port: tlsServer.port } }), 201);
  expect(seeded.status).toBe("valid");
  const other = await h.core.services.admin.createOrganization({ name: "Victim", plan: "pro" });
  const victimKey = await h.makeKey("owner", "live", other.id);

  const victimAdd = async (name: string) => {
    const started = performance.now();
    const response = await h.request("POST", "/v1/certificates", { key: victimKey.key, body: { domain: `${name}.${ZONE}`, port: tlsServer.port } });
    expect(response.status).toBe(201);
    return performance.now() - started;
  };
  const baseline = await victimAdd("alone");

  // The hostile organization asks for 8 checks of its certificate at once (8 of its requests).
  const hostileStarted = performance.now();
  const hostile = Array.from({ length: 8 }, () => h.request("POST", `/v1/certificates/${seeded.id}/check`));
  await Bun.sleep(20);
  const during = await victimAdd("during");
  const answered = await Promise.all(hostile);
  const hostileTook = performance.now() - hostileStarted;
  console.log(
    `victim add: ${baseline.toFixed(0)} ms alone, ${during.toFixed(0)} ms behind 8 hostile "check now" requests ` +
      `(statuses ${[...new Set(answered.map((r) => r.status))]}, all answered after ${hostileTook.toFixed(0)} ms; time limit ${TLS_TIMEOUT_MS} ms)`,
  );
  expect(during).toBeLessThan(2 * TLS_TIMEOUT_MS + 500);
}, 60_000);
