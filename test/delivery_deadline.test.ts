/**
 * CERTKEEPER_DELIVERY_TIMEOUT bounds one delivery attempt, connect to the last byte of the answer,
 * whatever the receiver does (CONTRACT §1): a mail server that keeps talking slowly is cut off like a
 * silent one, and an attempt of several requests (a PagerDuty resolve) shares one deadline. The
 * delivery lease is sized to that bound, so an attempt that outlived it would be sent again by a
 * second process (§9).
 */
import { afterAll, expect, test } from "bun:test";
import http from "node:http";
import net from "node:net";
import { Deliverer } from "../core/notify/deliverer.ts";
import { silentLogger } from "../core/base/log.ts";
import type { EmailMessage } from "../core/notify/ports.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpTransport } from "../adapters/notify/http.ts";
import { createSmtpTransport } from "../adapters/notify/smtp.ts";
import { channelRecord, deliveryRecord, eventRecord, NOW, organizationRecord } from "./support/store_conformance/mod.ts";
import { FakeClock } from "./support/fake_clock.ts";

const sockets = new Set<net.Socket>();
const servers: Array<net.Server | http.Server> = [];
afterAll(() => {
  for (const socket of sockets) socket.destroy();
  for (const server of servers) server.close();
});

async function listen(server: net.Server | http.Server): Promise<number> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return (server.address() as net.AddressInfo).port;
}

const message: EmailMessage = {
  from: "certkeeper@alerts.example",
  to: "ops@example.com",
  subject: "example.com: certificate expires in 7 days",
  text: "text\n",
  html: "<p>html</p>",
  messageId: "<evt_a1B2c3D4e5F6g7H8+ch_Z9y8X7w6V5u4T3s2@certkeeper>",
};

/**
 * A line-based SMTP server. Its first `slowSessions` sessions answer EHLO one line every 100 ms,
 * `slowLines` lines long (never silent for long); the rest answer at once. Counts sessions, those still open and accepted messages.
 */
function mailServer(slowSessions: number, slowLines: number) {
  const counts = { sessions: 0, open: 0, accepted: 0 };
  const server = net.createServer((socket) => {
    const slow = counts.sessions++ < slowSessions;
    counts.open++;
    socket.on("close", () => counts.open--);
    sockets.add(socket);
    socket.on("error", () => {});
    socket.write("220 mail.example ESMTP\r\n");
    let buffer = "";
    let inData = false;
    socket.on("data", (chunk) => {
      buffer += chunk.toString("latin1");
      for (;;) {
        if (inData) {
          const end = buffer.indexOf("\r\n.\r\n");
          if (end < 0) return;
          buffer = buffer.slice(end + 5);
          inData = false;
          counts.accepted++;
          socket.write("250 2.0.0 queued\r\n");
          continue;
        }
        const at = buffer.indexOf("\r\n");
        if (at < 0) return;
        const line = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const verb = line.slice(0, 4).toUpperCase();
        if (verb === "EHLO" && slow) {
          let sent = 0;
          const timer = setInterval(() => {
            if (socket.destroyed) return clearInterval(timer);
            if (++sent < slowLines) socket.write("250-thinking it over\r\n");
            else {
              clearInterval(timer);
              socket.write("250 OK\r\n");
            }
          }, 100);
          socket.on("close", () => clearInterval(timer));
        } else if (verb === "EHLO") socket.write("250-mail.example\r\n250 8BITMIME\r\n");
        else if (verb === "DATA") {
          inData = true;
          socket.write("354 go ahead\r\n");
        } else if (verb === "QUIT") socket.end("221 bye\r\n");
        else socket.write("250 OK\r\n");
      }
    });
  });
  return { server, counts };
}

test("a mail server that trickles an endless EHLO answer is cut off at the delivery timeout", async () => {
  const { server, counts } = mailServer(1, Number.POSITIVE_INFINITY);
  const port = await listen(server);
  const transport = createSmtpTransport({ url: `smtp://127.0.0.1:${port}`, trust: TrustStore.system(), timeoutMs: 600 });
  const started = performance.now();
  const outcome = await Promise.race([
    transport.send(message).then(
      () => "sent",
      (error: Error) => error.message,
    ),
    Bun.sleep(4000).then(() => "still running after 4 s"),
  ]);
  const elapsed = performance.now() - started;
  await transport.close();
  expect(outcome).toBe("Email to ops@example.com was not sent: the mail server did not finish within the delivery timeout (ETIMEDOUT)");
  expect(elapsed).toBeLessThan(600 + 1000);
  expect(counts.accepted).toBe(0);
  // The same transport still sends to a server that answers.
  await transport.send(message);
  expect(counts.accepted).toBe(1);
  await transport.close();
}, 10_000);

test("a slow-talking mail server does not get the same alert from two processes", async () => {
  const { server, counts } = mailServer(1, 20); // the first session's EHLO takes 2 s, never silent for 100 ms
  const port = await listen(server);
  const store = createMemoryStore();
  const clock = new FakeClock(NOW);
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope = { organizationId: org.id, mode: "live" as const };
  const channel = channelRecord(scope, { type: "email", config: { email: "oncall@example.com" }, signingSecret: null });
  await store.channels.insert(channel, { limit: 10 });
  const event = eventRecord(scope, {
    data: {
      certificate: {
        id: "cert_x", domain: "example.com", name: "example.com", port: 443, status: "expiring", statusReason: "expiring_soon",
        daysUntilExpiry: 6, expiresAt: new Date(NOW + 6.5 * 86400e3).toISOString(), issuer: "Example CA", serialNumber: "01:02",
      },
      threshold: 7,
    },
  });
  await store.events.insert(event, [deliveryRecord(event.id, channel.id, { nextAttemptAt: NOW })]);

  const TIMEOUT = 600;
  const process = (owner: string) => {
    const email = createSmtpTransport({ url: `smtp://127.0.0.1:${port}`, trust: TrustStore.system(), timeoutMs: TIMEOUT });
    const deliverer = new Deliverer({
      store, clock, logger: silentLogger, transports: { http: { post: async () => ({ status: 204, retryAfterMs: null }) }, email },
      retryMs: [5_000, 30_000], mailFrom: "alerts@certkeeper.test", owner, concurrency: 4, timeoutMs: TIMEOUT, pollMs: 1000,
    });
    return { deliverer, email };
  };
  const one = process("proc_one");
  const two = process("proc_two");

  const first = one.deliverer.loop.runDue();
  await Bun.sleep(300); // process one's attempt is under way
  clock.advance(3 * 60_000); // its lease (2 min) is over while the mail server still talks
  await two.deliverer.loop.runDue();
  await first;
  await one.email.close();
  await two.email.close();
  // Both sessions over: the slow one was cut, not left to finish and send its copy.
  while (counts.open > 0) await Bun.sleep(20);

  expect(counts).toEqual({ sessions: 2, open: 0, accepted: 1 });
  expect((await store.events.get(scope, event.id))?.deliveries.map((d) => d.status)).toEqual(["delivered"]);
}, 15_000);

test("one PagerDuty attempt of several requests (a resolve) ends within the delivery timeout", async () => {
  const TIMEOUT = 400;
  const requests: string[] = [];
  // Each answer comes well within the limit; together they do not.
  const port = await listen(
    http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        requests.push(req.url!);
        setTimeout(() => res.writeHead(202, { "content-type": "application/json" }).end('{"status":"success"}'), 250);
      });
    }),
  );
  const transport = createHttpTransport({ trust: TrustStore.system(), resolve: [], allowPrivateTargets: true });
  const scope = { organizationId: "org_aaaaaaaaaaaaaaaa", mode: "live" as const };
  const channel = channelRecord(scope, { type: "pagerduty", config: { routingKey: "R".repeat(32) }, signingSecret: null });
  const event = eventRecord(scope, {
    type: "certificate.renewed",
    certificateId: "cert_aaaaaaaaaaaaaaaa",
    data: { certificate: { id: "cert_aaaaaaaaaaaaaaaa", domain: "example.com", port: 443, daysUntilExpiry: 80, expiresAt: new Date(NOW + 80 * 86400e3).toISOString() } },
  });
  const deliverer = new Deliverer({
    store: createMemoryStore(), clock: new FakeClock(NOW), logger: silentLogger, transports: { http: transport, email: { send: async () => {} } },
    retryMs: [5000], mailFrom: "a@b.test", pagerdutyUrl: `http://127.0.0.1:${port}`, owner: "proc_one", concurrency: 1, timeoutMs: TIMEOUT, pollMs: 1000,
  });
  // The transport's first request loads its HTTP client: not the receiver's time, so not measured.
  await transport.post({ url: `http://127.0.0.1:${port}/warm`, headers: {}, body: "{}" }, { timeoutMs: 5000 });
  requests.length = 0;
  const started = performance.now();
  const result = await deliverer.attempt(event, channel);
  const elapsed = performance.now() - started;
  await transport.close();
  expect(requests.length).toBeGreaterThan(1); // a resolve is a sequence
  expect(result.delivered).toBe(false); // the sequence did not finish in time: tried again later, in full
  expect(result.error).toMatch(/did not answer within/);
  expect(elapsed).toBeLessThan(TIMEOUT + 300);
}, 10_000);
