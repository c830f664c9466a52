/**
 * A delivery to an IPv6 host reports its failure with the address in brackets before the port,
 * `[::1]:39449 refused the connection` (RFC 3986 §3.2.2, RFC 5952 §6), as certkeeper writes it
 * elsewhere (a check's failure names `b.example:443 ([::1]:443)`): `::1:39449` reads as another
 * address with no port. The channel test's `error` is what the tenant reads to fix their receiver.
 * Everything here is on ::1; private targets are allowed, as in every delivery test.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import https from "node:https";
import { chainPem, createLeaf } from "./support/pki.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { DEFAULT_CONFIG } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";

let h: Harness;
let transports: ReturnType<typeof createTransports>;
let server: https.Server | undefined;

beforeAll(async () => {
  const { root } = await testPki();
  transports = createTransports({ ...DEFAULT_CONFIG, allowPrivateTargets: true }, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-certkeeper-v6-outbox" });
  h = await createHarness({ transports, config: { dnsServers: "off" } });
});
afterAll(async () => {
  await h.close();
  await transports.close();
  server?.close();
});

/** A port of ::1 that nothing listens on. */
function closedV6Port(): Promise<number> {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.listen(0, "::1", () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

async function channelTest(url: string) {
  const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: `Hook ${crypto.randomUUID()}`, config: { url } } }), 201);
  return expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
}

test("a refused connection to http://[::1]:PORT/ is reported as [::1]:PORT", async () => {
  const port = await closedV6Port();
  const result = await channelTest(`http://[::1]:${port}/hook`);
  expect(result.status).toBe("failed");
  expect(result.error).toContain("ECONNREFUSED");
  expect(result.error).toContain(`[::1]:${port}`);
});

test("a failed TLS handshake with https://[::1]:PORT/ is reported as [::1]:PORT", async () => {
  // The receiver's certificate names 127.0.0.1 only: the handshake fails on host-name verification.
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`hook.${TEST_DOMAIN}`], ipAddresses: ["127.0.0.1"], daysLeft: 90 });
  server = https.createServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }, (_req, res) => res.end("ok"));
  await new Promise<void>((resolve) => server!.listen(0, "::1", () => resolve()));
  const { port } = server.address() as net.AddressInfo;
  const result = await channelTest(`https://[::1]:${port}/hook`);
  expect(result.status).toBe("failed");
  expect(result.error).toContain("ERR_TLS_CERT_ALTNAME_INVALID");
  expect(result.error).toContain(`[::1]:${port}`);
});
