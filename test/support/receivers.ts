/**
 * Real notification receivers on 127.0.0.1: an HTTP or HTTPS endpoint that records every request and
 * answers as scripted, and an SMTP server whose messages are parsed with a MIME parser.
 */
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { SMTPServer } from "smtp-server";
import PostalMime from "postal-mime";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the connection stays open until the receiver closes). */
  hang?: boolean;
  /** Answer only after this long (a slow receiver). */
  delayMs?: number;
}

export interface HttpReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** How the n-th request (0-based) is answered; default 200. */
  answer: (n: number, request: ReceivedRequest) => Answer;
  /** Resolves once `count` requests have arrived (or rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startHttpReceiver(options: { tls?: { cert: string; key: string }; host?: string; port?: number } = {}): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const receiver = {} as HttpReceiver;
  receiver.requests = requests;
  receiver.answer = () => ({ status: 200 });
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {}
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body,
        json,
        at: Date.now(),
      };
      const answer = receiver.answer(requests.length, request);
      requests.push(request);
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) waiter.resolve();
      if (answer.hang) return;
      const send = () => {
        res.writeHead(answer.status, answer.headers);
        res.end(answer.body ?? "");
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  };
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, handler) : http.createServer(handler);
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  receiver.port = port;
  receiver.url = `${options.tls ? "https" : "http"}://${options.host ?? "127.0.0.1"}:${port}`;
  receiver.waitFor = (count, timeoutMs = 5000) =>
    new Promise((resolve, reject) => {
      if (requests.length >= count) return resolve(requests);
      const timer = setTimeout(() => reject(new Error(`expected ${count} requests, got ${requests.length}`)), timeoutMs);
      waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(requests)) });
    });
  receiver.close = () =>
    new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return receiver;
}

export interface ReceivedMail {
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string;
  raw: string;
}

export interface SmtpReceiver {
  url: string;
  messages: ReceivedMail[];
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/** An SMTP server (no TLS, optional auth) collecting parsed messages. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ["STARTTLS"],
    authOptional: true,
    onAuth(auth, _session, callback) {
      if (auth.username === "certkeeper" && auth.password === "smtp-secret") return callback(null, { user: auth.username });
      callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", async () => {
        const raw = Buffer.concat(chunks).toString("utf8");
        const parsed = await PostalMime.parse(raw);
        messages.push({
          from: parsed.from?.address ?? "",
          to: session.envelope.rcptTo.map((r) => r.address),
          subject: parsed.subject ?? "",
          text: parsed.text ?? "",
          html: parsed.html ?? "",
          messageId: parsed.messageId ?? "",
          raw,
        });
        for (const waiter of waiters.filter((w) => messages.length >= w.count)) waiter.resolve();
        callback();
      });
    },
  });
  server.on("error", () => {});
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = ((server as unknown as { server: http.Server }).server.address() as AddressInfo).port;
  return {
    url: `smtp://certkeeper:smtp-secret@127.0.0.1:${port}`,
    messages,
    waitFor: (count, timeoutMs = 5000) =>
      new Promise((resolve, reject) => {
        if (messages.length >= count) return resolve(messages);
        const timer = setTimeout(() => reject(new Error(`expected ${count} messages, got ${messages.length}`)), timeoutMs);
        waiters.push({ count, resolve: () => (clearTimeout(timer), resolve(messages)) });
      }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
