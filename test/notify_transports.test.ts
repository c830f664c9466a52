/**
 * Notification transports against real receivers on 127.0.0.1: HTTP and HTTPS webhooks through the
 * guarded connect, an SMTP server, and the .eml outbox. Runs under Bun on purpose: the guard must
 * hold with Bun's runtime underneath undici.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import http from "node:http";
import https from "node:https";
import type net from "node:net";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import PostalMime from "postal-mime";
import { createHttpTransport } from "../adapters/notify/http.ts";
import { retryAfterMs as parseRetryAfter } from "../core/net/mod.ts";
import { createSmtpTransport } from "../adapters/notify/smtp.ts";
import { createOutboxTransport } from "../adapters/notify/outbox.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { NetFailure } from "../core/net/resolver.ts";
import type { EmailMessage } from "../core/notify/ports.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startSilentServer, type TestServer } from "./support/servers.ts";

const RESOLVE = [
  { pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" },
  { pattern: `gone.${TEST_DOMAIN}`, address: null },
];
const HOOKS = `hooks.${TEST_DOMAIN}`;

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  port: number;
  requests: Received[];
  connections(): number;
  close(): Promise<void>;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

async function listen(server: http.Server | https.Server, handler: Handler): Promise<Receiver> {
  const requests: Received[] = [];
  const sockets = new Set<net.Socket>();
  let connections = 0;
  server.on("connection", (socket: net.Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.on("tlsClientError", () => {});
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    let body = "";
    req.setEncoding("utf8");
    req.on("data", (chunk: string) => (body += chunk));
    req.on("end", () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    requests,
    connections: () => connections,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

const httpReceiver = (handler: Handler) => listen(http.createServer(), handler);
const ok: Handler = (_req, res) => res.writeHead(204).end();

async function expectNetFailure(promise: Promise<unknown>, reason: NetFailure["reason"]): Promise<NetFailure> {
  const error = await promise.then(
    () => {
      throw new Error("expected a NetFailure");
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(NetFailure);
  expect((error as NetFailure).reason).toBe(reason);
  return error as NetFailure;
}

const post = { headers: { "content-type": "application/json" }, body: '{"hello":"world"}' };

let trust: TrustStore;
let allowed: ReturnType<typeof createHttpTransport>;
let guarded: ReturnType<typeof createHttpTransport>;
let trustedTls: { cert: string; key: string };
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const pki = await testPki();
  trust = new TrustStore([pki.root.certPem]);
  const leaf = await createLeaf({ dnsNames: [HOOKS, `canary.${TEST_DOMAIN}`], issuer: pki.ecIntermediate });
  trustedTls = { cert: chainPem(leaf, pki.ecIntermediate), key: leaf.keyPem };
  allowed = createHttpTransport({ trust, resolve: RESOLVE, allowPrivateTargets: true, connectTimeoutMs: 2000 });
  guarded = createHttpTransport({ trust, resolve: RESOLVE, allowPrivateTargets: false, connectTimeoutMs: 2000 });
  closers.push(() => allowed.close(), () => guarded.close());
});

afterAll(async () => {
  await Promise.all(closers.map((close) => close()));
});

function track<T extends { close(): Promise<unknown> }>(server: T): T {
  closers.push(() => server.close());
  return server;
}

describe("HTTP transport", () => {
  test("posts the body and headers to an HTTP receiver and answers its status", async () => {
    const receiver = track(await httpReceiver(ok));
    const result = await allowed.post(
      { url: `http://${HOOKS}:${receiver.port}/hooks/in?x=1`, headers: { ...post.headers, Authorization: "Bearer t0k" }, body: post.body },
      { timeoutMs: 2000 },
    );
    expect(result).toEqual({ status: 204, retryAfterMs: null });
    expect(receiver.requests).toHaveLength(1);
    const [received] = receiver.requests;
    expect(received!.method).toBe("POST");
    expect(received!.url).toBe("/hooks/in?x=1");
    expect(received!.body).toBe('{"hello":"world"}');
    expect(received!.headers["content-type"]).toBe("application/json");
    expect(received!.headers.authorization).toBe("Bearer t0k");
    expect(received!.headers.host).toBe(`${HOOKS}:${receiver.port}`);
    expect(received!.headers["user-agent"]).toBe("certkeeper");
  });

  test("sends a URL's user info as Basic credentials, not in the request line", async () => {
    const receiver = track(await httpReceiver(ok));
    await allowed.post({ url: `http://hook%20user:p%40ss@${HOOKS}:${receiver.port}/in`, ...post }, { timeoutMs: 2000 });
    expect(receiver.requests[0]!.url).toBe("/in");
    expect(receiver.requests[0]!.headers.authorization).toBe(`Basic ${Buffer.from("hook user:p@ss").toString("base64")}`);
  });

  test("posts over HTTPS to a receiver whose chain leads to a trusted root", async () => {
    const receiver = track(await listen(https.createServer(trustedTls), (_req, res) => res.writeHead(200).end("thanks")));
    const result = await allowed.post({ url: `https://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 });
    expect(result).toEqual({ status: 200, retryAfterMs: null });
    expect(receiver.requests.map((r) => r.body)).toEqual(['{"hello":"world"}']);
  });

  test("refuses an HTTPS receiver whose certificate chains to an untrusted root", async () => {
    const { strangerRoot } = await testPki();
    const leaf = await createLeaf({ dnsNames: [HOOKS], issuer: strangerRoot });
    const receiver = track(await listen(https.createServer({ cert: leaf.certPem, key: leaf.keyPem }), ok));
    await expectNetFailure(allowed.post({ url: `https://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 }), "tls_error");
    expect(receiver.requests).toHaveLength(0);
  });

  test("refuses an HTTPS receiver whose certificate names another host", async () => {
    const pki = await testPki();
    const leaf = await createLeaf({ dnsNames: [`other.${TEST_DOMAIN}`], issuer: pki.ecIntermediate });
    const receiver = track(await listen(https.createServer({ cert: chainPem(leaf, pki.ecIntermediate), key: leaf.keyPem }), ok));
    await expectNetFailure(allowed.post({ url: `https://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 }), "tls_error");
    expect(receiver.requests).toHaveLength(0);
  });

  test("answers a 302 as the result and sends nothing to its Location", async () => {
    const target = track(await httpReceiver(ok));
    const redirecting = track(
      await httpReceiver((_req, res) => res.writeHead(302, { location: `http://${HOOKS}:${target.port}/elsewhere` }).end()),
    );
    const result = await allowed.post({ url: `http://${HOOKS}:${redirecting.port}/`, ...post }, { timeoutMs: 2000 });
    expect(result).toEqual({ status: 302, retryAfterMs: null });
    expect(target.connections()).toBe(0);
  });

  test("cuts off a receiver that never answers at the timeout", async () => {
    const silent = track(await httpReceiver(() => {}));
    const started = performance.now();
    const failure = await expectNetFailure(
      allowed.post({ url: `http://${HOOKS}:${silent.port}/`, ...post }, { timeoutMs: 300 }),
      "timeout",
    );
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(280);
    expect(elapsed).toBeLessThan(1500);
    expect(failure.message).toBe(`${HOOKS}:${silent.port} did not answer within 300 ms`);
  });

  test("keeps at most perHost requests in flight to one origin; the others wait their turn, their time starting then", async () => {
    let inFlight = 0;
    let most = 0;
    const slow = track(
      await httpReceiver((_req, res) => {
        most = Math.max(most, ++inFlight);
        setTimeout(() => {
          inFlight--;
          res.writeHead(200).end();
        }, 600);
      }),
    );
    const limited = createHttpTransport({ trust, resolve: RESOLVE, allowPrivateTargets: true, perHost: 2 });
    closers.push(() => limited.close());
    // Four posts of 600 ms each, two at a time, each within its 1000 ms once its turn came (the second
    // two would need 1200 ms had their time started with the first two).
    const results = await Promise.all(
      Array.from({ length: 4 }, () => limited.post({ url: `http://${HOOKS}:${slow.port}/`, ...post }, { timeoutMs: 1000 })),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect(most).toBe(2);
  });

  test("cuts off a TCP listener that never speaks HTTP at the timeout", async () => {
    const silent = track(await startSilentServer());
    await expectNetFailure(allowed.post({ url: `http://${HOOKS}:${silent.port}/`, ...post }, { timeoutMs: 300 }), "timeout");
  });

  test("answers the status of a response whose body never ends, at the timeout", async () => {
    const dribbling = track(await httpReceiver((_req, res) => res.writeHead(200).write("still going")));
    const started = performance.now();
    const result = await allowed.post({ url: `http://${HOOKS}:${dribbling.port}/`, ...post }, { timeoutMs: 300 });
    expect(result.status).toBe(200);
    expect(performance.now() - started).toBeLessThan(1500);
  });

  test("reads a few KB of a huge response and drops the rest without reading it", async () => {
    const TOTAL = 256 * 1024 * 1024;
    let sent = 0;
    let closedEarly!: Promise<boolean>;
    const huge = track(
      await httpReceiver((_req, res) => {
        res.writeHead(200, { "content-length": String(TOTAL) });
        const chunk = Buffer.alloc(64 * 1024, "x");
        closedEarly = new Promise((resolve) => {
          res.on("close", () => resolve(sent < TOTAL));
          const pump = () => {
            while (sent < TOTAL && !res.destroyed) {
              sent += chunk.length;
              if (!res.write(chunk)) return void res.once("drain", pump);
            }
            res.end();
          };
          pump();
        });
      }),
    );
    const result = await allowed.post({ url: `http://${HOOKS}:${huge.port}/`, ...post }, { timeoutMs: 5000 });
    expect(result.status).toBe(200);
    expect(await closedEarly).toBe(true);
    expect(sent).toBeLessThan(TOTAL / 4);
  });

  test("parses Retry-After given in seconds and as an HTTP date", async () => {
    const inSeconds = track(await httpReceiver((_req, res) => res.writeHead(429, { "retry-after": "120" }).end()));
    expect(await allowed.post({ url: `http://${HOOKS}:${inSeconds.port}/`, ...post }, { timeoutMs: 2000 })).toEqual({
      status: 429,
      retryAfterMs: 120_000,
    });
    const at = new Date(Date.now() + 60_000).toUTCString();
    const asDate = track(await httpReceiver((_req, res) => res.writeHead(503, { "retry-after": at }).end()));
    const result = await allowed.post({ url: `http://${HOOKS}:${asDate.port}/`, ...post }, { timeoutMs: 2000 });
    expect(result.status).toBe(503);
    expect(result.retryAfterMs).toBeGreaterThan(55_000);
    expect(result.retryAfterMs).toBeLessThanOrEqual(60_000);
  });

  test("parseRetryAfter() reads seconds, fractions and dates, and ignores anything else", () => {
    const now = Date.parse("2025-05-05T09:00:00.000Z");
    expect(parseRetryAfter("0", now)).toBe(0);
    expect(parseRetryAfter(" 30 ", now)).toBe(30_000);
    expect(parseRetryAfter("1.25", now)).toBe(1250);
    expect(parseRetryAfter("Mon, 05 May 2025 09:02:00 GMT", now)).toBe(120_000);
    expect(parseRetryAfter("Mon, 05 May 2025 08:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter(["7", "9"], now)).toBe(7000);
    for (const junk of [undefined, "", "-5", "soon", "1e3"]) expect(parseRetryAfter(junk, now)).toBeNull();
  });

  test("keeps a connection alive for one origin and opens another for another name", async () => {
    const receiver = track(await httpReceiver(ok));
    for (let i = 0; i < 3; i++) {
      expect((await allowed.post({ url: `http://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 })).status).toBe(204);
    }
    expect(receiver.connections()).toBe(1);
    await allowed.post({ url: `http://other.${TEST_DOMAIN}:${receiver.port}/`, ...post }, { timeoutMs: 2000 });
    expect(receiver.connections()).toBe(2);
    expect(receiver.requests.map((r) => r.headers.host)).toEqual([
      ...Array(3).fill(`${HOOKS}:${receiver.port}`),
      `other.${TEST_DOMAIN}:${receiver.port}`,
    ]);
  });

  test("a refused connection and a name that does not resolve are NetFailures", async () => {
    const port = await refusedPort();
    await expectNetFailure(allowed.post({ url: `http://${HOOKS}:${port}/`, ...post }, { timeoutMs: 2000 }), "connection_refused");
    await expectNetFailure(allowed.post({ url: `http://gone.${TEST_DOMAIN}/`, ...post }, { timeoutMs: 2000 }), "dns_error");
  });
});

describe("HTTP transport: the private-address guard", () => {
  let canary: TestServer;
  beforeAll(async () => {
    canary = track(await startSilentServer());
  });

  test("refuses a name that resolves to 127.0.0.1 and never connects to it, over HTTP and HTTPS", async () => {
    for (const scheme of ["http", "https"]) {
      const failure = await expectNetFailure(
        guarded.post({ url: `${scheme}://canary.${TEST_DOMAIN}:${canary.port}/`, ...post }, { timeoutMs: 2000 }),
        "connection_refused",
      );
      expect(failure.message).toContain("resolves to a loopback address");
      expect(failure.message).not.toContain("127.0.0.1"); // the kind of address, never the address
    }
    await Bun.sleep(50); // anything that slipped past the guard would have connected by now
    expect(canary.connections()).toBe(0);
  });

  test("refuses loopback addresses written into the URL, IPv4-mapped IPv6 included", async () => {
    for (const host of ["127.0.0.1", "[::ffff:127.0.0.1]", "[::1]"]) {
      await expectNetFailure(guarded.post({ url: `http://${host}:${canary.port}/`, ...post }, { timeoutMs: 2000 }), "connection_refused");
    }
    await Bun.sleep(50);
    expect(canary.connections()).toBe(0);
  });

  test("the same receiver is reached once private targets are allowed (the canary works)", async () => {
    const receiver = track(await httpReceiver(ok));
    await expectNetFailure(guarded.post({ url: `http://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 }), "connection_refused");
    expect(receiver.connections()).toBe(0);
    expect((await allowed.post({ url: `http://${HOOKS}:${receiver.port}/`, ...post }, { timeoutMs: 2000 })).status).toBe(204);
    expect(receiver.connections()).toBe(1);
  });
});

const message: EmailMessage = {
  from: "certkeeper@alerts.example",
  to: "ops@example.com",
  subject: "example.com: certificate expires in 7 days",
  text: "The TLS certificate for example.com expires in 7 days.\n",
  html: "<p>The TLS certificate for <b>example.com</b> expires in 7 days.</p>",
  messageId: "<evt_a1B2c3D4e5F6g7H8+ch_Z9y8X7w6V5u4T3s2@certkeeper>",
};

async function expectParsedMessage(raw: string | Uint8Array) {
  const parsed = await PostalMime.parse(raw);
  expect(parsed.subject).toBe(message.subject);
  expect(parsed.from?.address).toBe(message.from);
  expect(parsed.to?.map((to) => to.address)).toEqual([message.to]);
  // postal-mime keeps the line break that belongs to the MIME boundary, so compare without trailing space.
  expect(parsed.text?.trimEnd()).toBe(message.text.trimEnd());
  expect(parsed.html?.trimEnd()).toBe(message.html);
  expect(parsed.messageId).toBe(message.messageId);
  expect(parsed.headers.find((h) => h.key === "auto-submitted")?.value).toBe("auto-generated");
}

const SMTP_PASSWORD = "p@ss w0rd/!";

async function startSmtp(options: { secure?: { cert: string; key: string } } = {}) {
  const received: Array<{ raw: string; from: string; to: string[]; user: unknown }> = [];
  const counts = { logins: 0 };
  const server = new SMTPServer({
    secure: Boolean(options.secure),
    ...options.secure,
    disabledCommands: options.secure ? [] : ["STARTTLS"],
    allowInsecureAuth: true,
    authMethods: ["PLAIN", "LOGIN"],
    logger: false,
    onAuth(auth, _session, callback) {
      counts.logins++;
      if (auth.username === "alerts" && auth.password === SMTP_PASSWORD) return callback(null, { user: "alerts" });
      // A careless server that echoes the password: the transport must still not repeat it.
      callback(new Error(`Invalid password ${auth.password}`));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        received.push({
          raw: Buffer.concat(chunks).toString("utf8"),
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          user: session.user,
        });
        callback();
      });
    },
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as net.AddressInfo).port;
  return { port, received, get logins() { return counts.logins; }, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe("SMTP transport", () => {
  const auth = `alerts:${encodeURIComponent(SMTP_PASSWORD)}`;

  test("sends the message to an SMTP server, authenticated with the URL's credentials", async () => {
    const smtp = track(await startSmtp());
    const transport = createSmtpTransport({ url: `smtp://${auth}@127.0.0.1:${smtp.port}`, trust: TrustStore.system() });
    await transport.send(message);
    await transport.close();
    expect(smtp.received).toHaveLength(1);
    const [mail] = smtp.received;
    expect(mail!.user).toBe("alerts");
    expect(mail!.from).toBe(message.from);
    expect(mail!.to).toEqual([message.to]);
    await expectParsedMessage(mail!.raw);
  });

  test("sends over smtps:// to a name from CERTKEEPER_RESOLVE, trusting the extra root", async () => {
    const pki = await testPki();
    const leaf = await createLeaf({ dnsNames: [`mail.${TEST_DOMAIN}`], issuer: pki.ecIntermediate });
    const smtp = track(await startSmtp({ secure: { cert: chainPem(leaf, pki.ecIntermediate), key: leaf.keyPem } }));
    const transport = createSmtpTransport({ url: `smtps://${auth}@mail.${TEST_DOMAIN}:${smtp.port}`, trust, resolve: RESOLVE });
    await transport.send(message);
    await transport.close();
    await expectParsedMessage(smtp.received[0]!.raw);
  });

  test("credentials go only encrypted to a server named other than this machine: no STARTTLS offered, nothing sent", async () => {
    const smtp = track(await startSmtp());
    // The name resolves to 127.0.0.1 only by CERTKEEPER_RESOLVE: as the operator wrote it, a remote relay.
    const transport = createSmtpTransport({ url: `smtp://${auth}@mail.${TEST_DOMAIN}:${smtp.port}`, trust, resolve: RESOLVE });
    const error = await transport.send(message).then(
      () => null,
      (e: Error) => e,
    );
    await transport.close();
    expect(error?.message).toStartWith("Email to ops@example.com was not sent: the mail server does not offer STARTTLS");
    expect(smtp.received).toHaveLength(0);
    expect(smtp.logins).toBe(0);
  });

  test("a refused login fails with a message that names what happened and echoes nothing of the server", async () => {
    const smtp = track(await startSmtp());
    const transport = createSmtpTransport({ url: `smtp://alerts:${encodeURIComponent("wrong " + SMTP_PASSWORD)}@127.0.0.1:${smtp.port}`, trust });
    const error = await transport.send(message).then(
      () => null,
      (e: Error) => e,
    );
    await transport.close();
    expect(error).toBeInstanceOf(Error);
    expect(error!.message).toStartWith("Email to ops@example.com was not sent: ");
    expect(error!.message).toBe("Email to ops@example.com was not sent: the mail server refused certkeeper's sign-in (EAUTH 535)");
    expect(error!.message).not.toContain("w0rd");
    expect(error!.message).not.toContain(encodeURIComponent(SMTP_PASSWORD));
    expect(smtp.received).toHaveLength(0);
  });

  test("an SMTP server that accepts the connection and never greets fails the attempt within the delivery timeout", async () => {
    const silent = await startSilentServer();
    const transport = createSmtpTransport({ url: `smtp://${auth}@127.0.0.1:${silent.port}`, trust, timeoutMs: 600 });
    const started = performance.now();
    const error = await transport.send(message).then(
      () => null,
      (e: Error) => e,
    );
    await silent.close();
    expect(error?.message).toStartWith("Email to ops@example.com was not sent: ");
    expect(performance.now() - started).toBeLessThan(600 + 400);
  });

  test("an unreachable SMTP server fails with a safe message", async () => {
    const port = await refusedPort();
    const transport = createSmtpTransport({ url: `smtp://${auth}@127.0.0.1:${port}`, trust });
    const error = await transport.send(message).then(
      () => null,
      (e: Error) => e,
    );
    expect(error?.message).toStartWith("Email to ops@example.com was not sent: ");
    expect(error!.message).not.toContain("w0rd");
  });
});

describe("outbox transport", () => {
  test("writes each message as a parsable .eml file named for its event and channel", async () => {
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-outbox-"));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const outbox = createOutboxTransport({ dir: join(dir, "outbox") });
    await outbox.send(message);
    await outbox.send(message); // a repeated delivery replaces its file
    expect(readdirSync(join(dir, "outbox"))).toEqual(["evt_a1B2c3D4e5F6g7H8+ch_Z9y8X7w6V5u4T3s2.eml"]);
    await expectParsedMessage(readFileSync(join(dir, "outbox", "evt_a1B2c3D4e5F6g7H8+ch_Z9y8X7w6V5u4T3s2.eml")));
  });

  test("createTransports() writes to the outbox when no SMTP URL is configured", async () => {
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-outbox-"));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const transports = createTransports({ ...DEFAULT_CONFIG, smtpUrl: undefined }, trust, { outboxDir: dir });
    await transports.email.send(message);
    await transports.close();
    expect(readdirSync(dir)).toHaveLength(1);
  });
});
