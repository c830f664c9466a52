/**
 * STARTTLS (CONTRACT §12): each protocol's standard upgrade against a real server where npm has one
 * (smtp-server) and RFC-exact fixtures otherwise, each fixture checked against `openssl s_client
 * -starttls`; refusals; and hostile servers that must cost at most the timeout and a small buffer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import net from "node:net";
import { SMTPServer } from "smtp-server";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startHostileServer, startStarttlsServer, type StarttlsProtocol, type StarttlsServer } from "./support/starttls_servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { retrieveEndpoints } from "../core/tls/endpoint_retrieve.ts";
import { START_TLS_REQUEST } from "../core/starttls/ldap.ts";
import { SSL_REQUEST } from "../core/starttls/postgres.ts";
import { sslRequestPacket } from "../core/starttls/mysql.ts";
import { streamHeader } from "../core/starttls/xmpp.ts";
import { MAX_EXCHANGE, MAX_REPLY } from "../core/starttls/mod.ts";

const DOMAIN = `mail.${TEST_DOMAIN}`;
const PROTOCOLS: StarttlsProtocol[] = ["smtp", "imap", "pop3", "ftp", "postgres", "mysql", "ldap", "xmpp"];
let h: Harness;
let leaf: Issued;
let cert: string;
const servers: Array<{ close(): Promise<unknown> }> = [];

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  cert = chainPem(leaf, rsaIntermediate);
  h = await createHarness();
});

afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function fixture(protocol: StarttlsProtocol, behaviour: "ok" | "refuse" | "silent" = "ok"): Promise<StarttlsServer> {
  const server = await startStarttlsServer(protocol, { cert, key: leaf.keyPem, behaviour });
  servers.push(server);
  return server;
}

const retrieve = (port: number, protocol: StarttlsProtocol, timeoutMs = 2000) =>
  retrieveEndpoints(DOMAIN, port, { timeoutMs, protocol, rules: [{ pattern: DOMAIN, address: "127.0.0.1" }], allowPrivateTargets: true });

/** Exactly what a client must send before the TLS handshake, and nothing more (no credentials). */
const UPGRADE_BYTES: Record<StarttlsProtocol, string> = {
  smtp: "EHLO certkeeper.invalid\r\nSTARTTLS\r\n",
  imap: "A1 STARTTLS\r\n",
  pop3: "STLS\r\n",
  ftp: "AUTH TLS\r\n",
  postgres: Buffer.from(SSL_REQUEST).toString("latin1"),
  mysql: Buffer.from(sslRequestPacket(1)).toString("latin1"),
  ldap: Buffer.from(START_TLS_REQUEST).toString("latin1"),
  xmpp: `${streamHeader(DOMAIN)}<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>`,
};

describe("the upgrade of each protocol", () => {
  test.each(PROTOCOLS)("%s: added with its protocol, watched over STARTTLS, only the upgrade sent", async (protocol) => {
    const server = await fixture(protocol);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: DOMAIN, port: server.port, protocol } }), 201);
    const got = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([got.protocol, got.status, got.serialNumber, got.endpoints.map((e: any) => e.status)]).toEqual([
      protocol,
      "valid",
      leaf.cert.serialNumber.toUpperCase().match(/../g)!.join(":"),
      ["valid"],
    ]);
    expect(server.received()).toEqual([UPGRADE_BYTES[protocol]]);
  });

  test("smtp against a real SMTP server (smtp-server): the certificate it upgrades to", async () => {
    const smtp = new SMTPServer({ secure: false, key: leaf.keyPem, cert, authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) });
    const port = (smtp.server.address() as { port: number }).port;
    const [endpoint] = await retrieve(port, "smtp");
    expect(endpoint!.ok).toBe(true);
    if (endpoint!.ok) expect(endpoint!.chain.ders.length).toBe(2);
  });
});

describe("a server that does not offer or refuses the upgrade: starttls_refused", () => {
  test.each(PROTOCOLS)("%s refusing", async (protocol) => {
    const server = await fixture(protocol, "refuse");
    const [endpoint] = await retrieve(server.port, protocol);
    expect(endpoint).toEqual({ address: "127.0.0.1", ok: false, reason: "starttls_refused", message: expect.stringContaining(`${DOMAIN}:${server.port}`) });
  });

  test("a real SMTP server with STARTTLS hidden; on add, 422 certificate_not_found naming the refusal", async () => {
    const smtp = new SMTPServer({ secure: false, key: leaf.keyPem, cert, hideSTARTTLS: true, authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(0, "127.0.0.1", () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => smtp.close(() => resolve())) });
    const port = (smtp.server.address() as { port: number }).port;
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `refusing.${TEST_DOMAIN}`, port, protocol: "smtp" } });
    expectError(response, 422, "certificate_not_found");
    expect(response.body.error.message).toContain("does not offer STARTTLS");
  });

  test("an IMAP server that says BYE to STARTTLS and hangs up refuses the upgrade", async () => {
    const bye = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.write("* OK [CAPABILITY IMAP4rev1 STARTTLS] ready\r\n");
      socket.once("data", () => socket.end("* BYE [UNAVAILABLE] going down for maintenance\r\n"));
    });
    await new Promise<void>((resolve) => bye.listen(0, "127.0.0.1", () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => bye.close(() => resolve())) });
    const [endpoint] = await retrieve((bye.address() as net.AddressInfo).port, "imap");
    expect(endpoint).toMatchObject({ ok: false, reason: "starttls_refused", message: expect.stringContaining("BYE") });
  });

  test("a monitored certificate whose server stops offering the upgrade is unreachable (starttls_refused)", async () => {
    const { rsaIntermediate } = await testPki();
    const ok = await fixture("pop3");
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `pop.${TEST_DOMAIN}`, port: ok.port, protocol: "pop3" } }), 201);
    await ok.close();
    servers.push(await startStarttlsServer("pop3", { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, behaviour: "refuse", port: ok.port }));
    const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect([checked.status, checked.statusReason, checked.endpoints[0].statusReason]).toEqual(["unreachable", "starttls_refused", "starttls_refused"]);
  });
});

describe("hostile servers cost at most the timeout and a small buffer", () => {
  test("an endless greeting is cut off after a bounded number of bytes, well before the timeout", async () => {
    const hostile = await startHostileServer("endless");
    servers.push(hostile);
    const started = performance.now();
    const [endpoint] = await retrieve(hostile.port, "smtp", 5000);
    expect(performance.now() - started).toBeLessThan(2500);
    expect(endpoint).toMatchObject({ ok: false, reason: "tls_error", message: expect.stringContaining(`more than ${MAX_EXCHANGE} bytes`) });
  });

  test("a megabyte line is refused once it passes the line limit", async () => {
    const hostile = await startHostileServer("huge");
    servers.push(hostile);
    const started = performance.now();
    const [endpoint] = await retrieve(hostile.port, "imap", 5000);
    expect(performance.now() - started).toBeLessThan(2500);
    expect(endpoint).toMatchObject({ ok: false, reason: "tls_error", message: expect.stringContaining(`longer than ${MAX_REPLY} bytes`) });
  });

  test("xmpp: 63 KB of unclosed tags in one burst are judged in linear time, never holding the event loop", async () => {
    const hostile = await startHostileServer("xmpp-tags");
    servers.push(hostile);
    let longestStall = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      longestStall = Math.max(longestStall, performance.now() - last);
      last = performance.now();
    }, 2);
    const started = performance.now();
    const [endpoint] = await retrieve(hostile.port, "xmpp", 300);
    const elapsed = performance.now() - started;
    clearInterval(ticker);
    longestStall = Math.max(longestStall, performance.now() - last);
    expect(endpoint).toMatchObject({ ok: false });
    expect({ elapsed: elapsed < 800, longestStall: longestStall < 200 }).toEqual({ elapsed: true, longestStall: true });
  });

  test("a server that drips one byte at a time ends at the timeout", async () => {
    const hostile = await startHostileServer("drip");
    servers.push(hostile);
    const started = performance.now();
    const [endpoint] = await retrieve(hostile.port, "smtp", 1000);
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(1800);
    expect(endpoint).toMatchObject({ ok: false, reason: "timeout" });
  });

  test.each(PROTOCOLS)("%s: a server that never answers ends at the timeout", async (protocol) => {
    const silent = await fixture(protocol, "silent");
    const started = performance.now();
    const [endpoint] = await retrieve(silent.port, protocol, 600);
    const elapsed = performance.now() - started;
    expect(endpoint).toMatchObject({ ok: false, reason: "timeout" });
    expect(elapsed).toBeLessThan(1500);
  });

  test("a MySQL server announcing a 16 MB handshake packet is refused without reading it", async () => {
    const net = await import("node:net");
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.write(Buffer.from([0xff, 0xff, 0xff, 0]));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const [endpoint] = await retrieve((server.address() as { port: number }).port, "mysql");
    expect(endpoint).toMatchObject({ ok: false, reason: "tls_error", message: expect.stringContaining("announced a reply of 16777215 bytes") });
  });

  test("a server that sends data after accepting the upgrade, before the handshake, is refused (no injection)", async () => {
    const net = await import("node:net");
    const server = net.createServer((socket) => {
      socket.on("error", () => {});
      socket.write("+OK ready\r\n");
      socket.once("data", () => socket.write("+OK go ahead\r\n+OK injected\r\n"));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
    servers.push({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const [endpoint] = await retrieve((server.address() as { port: number }).port, "pop3");
    expect(endpoint).toMatchObject({ ok: false, reason: "tls_error", message: expect.stringContaining("sent data after accepting the upgrade") });
  });
});

const OPENSSL = ["/usr/bin/openssl", "/usr/local/bin/openssl"].find((path) => existsSync(path));

describe.skipIf(!OPENSSL)("the fixtures are honest: openssl s_client -starttls completes a handshake with each", () => {
  test.each(PROTOCOLS)("%s", async (protocol) => {
    const server = await fixture(protocol);
    const args = [OPENSSL!, "s_client", "-starttls", protocol, "-connect", `127.0.0.1:${server.port}`, "-servername", DOMAIN, "-brief"];
    if (protocol === "xmpp") args.push("-xmpphost", DOMAIN);
    const child = Bun.spawn(args, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => child.kill(), 10_000);
    const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
    clearTimeout(timer);
    await child.exited;
    expect({ protocol, established: `${out}${err}`.includes("CONNECTION ESTABLISHED") }).toEqual({ protocol, established: true });
  });
});
