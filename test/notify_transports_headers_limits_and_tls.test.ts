/**
 * Notification transports (adapters/notify) against real receivers on 127.0.0.1: what a channel's
 * owner set is sent as set, the operator's services are reached under the private-address rule, SNI,
 * the connect and greeting time limits, the default per-destination limit and the slot hand-over, the
 * default 4 KB read, and SMTP's certificate check and local relays.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import type net from "node:net";
import tls from "node:tls";
import { SMTPServer } from "smtp-server";
import { createHttpTransport } from "../adapters/notify/http.ts";
import { createSmtpTransport } from "../adapters/notify/smtp.ts";
import { NetFailure } from "../core/net/resolver.ts";
import type { EmailMessage } from "../core/notify/ports.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, createRootCa } from "./support/pki.ts";
import { startSilentServer } from "./support/servers.ts";
import { until } from "./support/until.ts";

const HOOKS = `hooks.${TEST_DOMAIN}`;
const RESOLVE = [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }];
const post = { headers: { "content-type": "application/json" }, body: '{"hello":"world"}' };

interface Received {
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
}

let trust: TrustStore;
let trustedTls: { cert: string; key: string };
let otherTls: { cert: string; key: string };
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const pki = await testPki();
  trust = new TrustStore([pki.root.certPem]);
  const leaf = await createLeaf({ dnsNames: [HOOKS, `mail.${TEST_DOMAIN}`], issuer: pki.ecIntermediate });
  trustedTls = { cert: chainPem(leaf, pki.ecIntermediate), key: leaf.keyPem };
  const other = await createLeaf({ dnsNames: [`elsewhere.${TEST_DOMAIN}`], issuer: pki.ecIntermediate });
  otherTls = { cert: chainPem(other, pki.ecIntermediate), key: other.keyPem };
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

function transport(options: Partial<Parameters<typeof createHttpTransport>[0]> = {}) {
  const t = createHttpTransport({ trust, resolve: RESOLVE, allowPrivateTargets: true, connectTimeoutMs: 2000, ...options });
  closers.push(() => t.close());
  return t;
}

/** A receiver answering each request through `handler` (204 by default), recording what came. */
async function receiver(server: http.Server, handler?: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const requests: Received[] = [];
  const sockets = new Set<net.Socket>();
  server.on("connection", (socket: net.Socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    req.resume();
    req.on("end", () => {
      requests.push({ headers: req.headers, rawHeaders: req.rawHeaders });
      if (handler) handler(req, res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as net.AddressInfo).port, requests };
}

async function failureOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => null,
    (error: unknown) => error,
  );
}

describe("HTTP transport: the channel owner's headers", () => {
  test("a webhook channel's own User-Agent is sent as set, alone", async () => {
    const r = await receiver(http.createServer());
    const result = await transport().post({ url: `http://${HOOKS}:${r.port}/`, headers: { ...post.headers, "User-Agent": "acme-relay/2" }, body: post.body }, { timeoutMs: 2000 });
    expect(result.status).toBe(204);
    expect(r.requests[0]!.headers["user-agent"]).toBe("acme-relay/2");
    expect(r.requests[0]!.rawHeaders.filter((_, i, all) => i % 2 === 0 && all[i]!.toLowerCase() === "user-agent")).toHaveLength(1);
  });

  test("a channel's own Authorization header wins over user info in its URL, and is the only one sent", async () => {
    const r = await receiver(http.createServer());
    const result = await transport().post(
      { url: `http://someone:secret@${HOOKS}:${r.port}/`, headers: { ...post.headers, Authorization: "Bearer channel-token" }, body: post.body },
      { timeoutMs: 2000 },
    );
    expect(result.status).toBe(204);
    expect(r.requests[0]!.headers.authorization).toBe("Bearer channel-token");
    expect(r.requests[0]!.rawHeaders.filter((_, i, all) => i % 2 === 0 && all[i]!.toLowerCase() === "authorization")).toHaveLength(1);
  });
});

describe("HTTP transport: where it connects", () => {
  test("the operator's services (PagerDuty's, Telegram's base URL) are reached on a private address under the private-address rule; a channel's URL there is refused", async () => {
    const r = await receiver(http.createServer());
    const guarded = transport({ allowPrivateTargets: false });
    const url = `http://127.0.0.1:${r.port}/v2/enqueue`;
    expect((await guarded.post({ url, ...post, operator: true }, { timeoutMs: 2000 })).status).toBe(204);
    expect(r.requests).toHaveLength(1);
    const refused = await failureOf(guarded.post({ url, ...post }, { timeoutMs: 2000 }));
    expect(refused).toBeInstanceOf(NetFailure);
    expect(r.requests).toHaveLength(1);
  });

  test("an HTTPS receiver that picks its certificate by SNI (shared hosting) gets the receiver's name and is reached", async () => {
    const names: string[] = [];
    const right = tls.createSecureContext(trustedTls);
    // Without a name, the host's default site: a certificate for another name.
    const server = tls.createServer({ ...otherTls, SNICallback: (name, callback) => (names.push(name), callback(null, name === HOOKS ? right : tls.createSecureContext(otherTls))) }, (socket) => {
      let request = "";
      socket.on("error", () => {});
      socket.on("data", (chunk: Buffer) => {
        request += chunk.toString("utf8");
        if (request.includes(post.body)) socket.end("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
      });
    });
    server.on("tlsClientError", () => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as net.AddressInfo).port;
    expect((await transport().post({ url: `https://${HOOKS}:${port}/`, ...post }, { timeoutMs: 2000 })).status).toBe(204);
    expect(names).toEqual([HOOKS]);
  });

  test("a receiver that accepts the connection and never completes the TLS handshake fails at the connect time limit, not the attempt's", async () => {
    const silent = await startSilentServer();
    closers.push(() => silent.close());
    const t = transport({ connectTimeoutMs: 300 });
    const started = performance.now();
    const error = await failureOf(t.post({ url: `https://${HOOKS}:${silent.port}/`, ...post }, { timeoutMs: 8_000 }));
    expect(error).toBeInstanceOf(NetFailure);
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});

describe("HTTP transport: limits", () => {
  test("by default 16 requests are in flight to one destination, the 17th waits for a slot", async () => {
    const held: http.ServerResponse[] = [];
    const r = await receiver(http.createServer(), (_req, res) => void held.push(res));
    const t = transport();
    const posts = Array.from({ length: 17 }, () => t.post({ url: `http://${HOOKS}:${r.port}/`, ...post }, { timeoutMs: 10_000 }));
    await until("16 in flight", async () => held.length >= 16 || null, 5_000);
    // Had the 17th a slot, it would be there by now (the 16 before it took less).
    await Bun.sleep(300);
    expect(held).toHaveLength(16);
    held.shift()!.writeHead(200).end();
    await until("the 17th sent once a slot is free", async () => held.length === 16 || null, 5_000);
    for (const res of held) res.writeHead(200).end();
    expect((await Promise.all(posts)).map((p) => p.status)).toEqual(Array(17).fill(200));
  });

  test("a slot handed to a waiting request stays counted: a later request waits its turn before its time starts", async () => {
    const held: http.ServerResponse[] = [];
    const r = await receiver(http.createServer(), (_req, res) => void held.push(res));
    const t = transport({ perHost: 2 });
    const send = (timeoutMs: number) => t.post({ url: `http://${HOOKS}:${r.port}/`, ...post }, { timeoutMs });
    const first = [send(10_000), send(10_000), send(10_000)];
    await until("two in flight", async () => held.length === 2 || null, 5_000);
    held.shift()!.writeHead(200).end(); // its slot goes to the third
    await until("the third in flight", async () => held.length === 2 || null, 5_000);
    // Both slots are taken: a fourth of 500 ms waits for one, its time not yet running.
    const fourth = send(500);
    await Bun.sleep(800);
    expect(held).toHaveLength(2);
    for (const res of held.splice(0)) res.writeHead(200).end();
    await until("the fourth in flight", async () => held.length === 1 || null, 5_000);
    held.shift()!.writeHead(200).end();
    expect((await fourth).status).toBe(200);
    expect((await Promise.all(first)).map((p) => p.status)).toEqual([200, 200, 200]);
  });

  test("by default only the first 4 KB of an answer are read: a receiver that sends 8 KB and never ends is answered at once", async () => {
    const r = await receiver(http.createServer(), (_req, res) => {
      res.writeHead(200, { "content-length": String(1024 * 1024) });
      res.write(Buffer.alloc(8 * 1024, "x"));
    });
    const started = performance.now();
    const result = await transport().post({ url: `http://${HOOKS}:${r.port}/`, ...post }, { timeoutMs: 5_000 });
    expect(result.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

const message: EmailMessage = {
  from: "certkeeper@alerts.example",
  to: "ops@example.com",
  subject: "example.com: certificate expires in 7 days",
  text: "The TLS certificate for example.com expires in 7 days.\n",
  html: "<p>The TLS certificate for <b>example.com</b> expires in 7 days.</p>",
  messageId: "<evt_r1+ch_r2@certkeeper>",
};

async function startSmtp(options: { secure?: { cert: string; key: string } } = {}) {
  const received: string[] = [];
  const server = new SMTPServer({
    secure: Boolean(options.secure),
    ...options.secure,
    disabledCommands: options.secure ? [] : ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === "alerts" && auth.password === "secret") return callback(null, { user: "alerts" });
      callback(new Error("no"));
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push(Buffer.concat(chunks).toString("utf8"));
        callback();
      });
    },
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { port: (server.server.address() as net.AddressInfo).port, received };
}

describe("SMTP transport", () => {
  test("an smtps:// server whose certificate chains to an untrusted root is refused: nothing is sent", async () => {
    const stranger = await createRootCa({ name: "CN=Stranger Root" });
    const leaf = await createLeaf({ dnsNames: [`mail.${TEST_DOMAIN}`], issuer: stranger });
    const smtp = await startSmtp({ secure: { cert: chainPem(leaf, stranger), key: leaf.keyPem } });
    const email = createSmtpTransport({ url: `smtps://alerts:secret@mail.${TEST_DOMAIN}:${smtp.port}`, trust, resolve: RESOLVE, timeoutMs: 3_000 });
    const error = (await failureOf(email.send(message))) as Error | null;
    await email.close();
    expect(error?.message).toStartWith("Email to ops@example.com was not sent: ");
    expect(smtp.received).toHaveLength(0);
  });

  test("a server that never greets is given up at half the delivery timeout, as connecting is", async () => {
    const silent = await startSilentServer();
    closers.push(() => silent.close());
    const email = createSmtpTransport({ url: `smtp://127.0.0.1:${silent.port}`, trust, timeoutMs: 3_000 });
    const started = performance.now();
    const error = (await failureOf(email.send(message))) as Error | null;
    await email.close();
    expect(error?.message).toStartWith("Email to ops@example.com was not sent: ");
    expect(performance.now() - started).toBeLessThan(2_400);
  });

  test("a relay named under .localhost is this machine: credentials go to it without STARTTLS", async () => {
    const smtp = await startSmtp();
    const email = createSmtpTransport({
      url: `smtp://alerts:secret@relay.localhost:${smtp.port}`,
      trust,
      resolve: [{ pattern: "relay.localhost", address: "127.0.0.1" }],
      timeoutMs: 3_000,
    });
    await email.send(message);
    await email.close();
    expect(smtp.received).toHaveLength(1);
  });
});
