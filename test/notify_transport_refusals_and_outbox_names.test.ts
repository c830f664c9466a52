/**
 * Edges of the transports (adapters/notify) a user meets: an SMTP URL or resolve rule that cannot
 * work is refused when the transport is made, a refused recipient is named as such, the outbox never
 * writes outside its folder, and the HTTP client bounds an answer sent without a declared length and
 * refuses one declared too large before reading it.
 */
import { afterAll, describe, expect, test } from "bun:test";
import http from "node:http";
import type net from "node:net";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SMTPServer } from "smtp-server";
import { createSmtpTransport } from "../adapters/notify/smtp.ts";
import { createOutboxTransport } from "../adapters/notify/outbox.ts";
import { createHttpFetcher } from "../adapters/notify/mod.ts";
import { FetchFailure } from "../core/net/mod.ts";
import type { EmailMessage } from "../core/notify/ports.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

const closers: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const message: EmailMessage = {
  from: "certkeeper@alerts.example",
  to: "ops@example.com",
  subject: "example.com: certificate expires in 7 days",
  text: "The TLS certificate for example.com expires in 7 days.\n",
  html: "<p>The TLS certificate for <b>example.com</b> expires in 7 days.</p>",
  messageId: "<evt_e1+ch_e2@certkeeper>",
};

describe("SMTP transport: refused when made, and named failures", () => {
  test("a URL that is not smtp:// or smtps:// is refused when the transport is made", () => {
    expect(() => createSmtpTransport({ url: "http://mail.example.com:25", trust: new TrustStore([]) })).toThrow("The SMTP URL must start with smtp:// or smtps://");
  });

  test("a CERTKEEPER_RESOLVE rule saying the SMTP host does not resolve is refused when the transport is made", () => {
    expect(() =>
      createSmtpTransport({ url: "smtp://mail.example.com:25", trust: new TrustStore([]), resolve: [{ pattern: "mail.example.com", address: null }] }),
    ).toThrow("The SMTP host mail.example.com does not resolve (CERTKEEPER_RESOLVE)");
  });

  test("a recipient the server refuses fails the attempt as such, with the codes and nothing the server said", async () => {
    const server = new SMTPServer({
      disabledCommands: ["STARTTLS", "AUTH"],
      logger: false,
      onRcptTo(_address, _session, callback) {
        const error = new Error("mailbox ops@example.com unknown here (server-side detail)") as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
      },
    });
    server.on("error", () => {});
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const email = createSmtpTransport({ url: `smtp://127.0.0.1:${(server.server.address() as net.AddressInfo).port}`, trust: new TrustStore([]), timeoutMs: 3_000 });
    const error = await email.send(message).then(
      () => null,
      (e: Error) => e,
    );
    await email.close();
    expect(error?.message).toBe("Email to ops@example.com was not sent: the mail server refused the sender or the recipient (EENVELOPE 550)");
  });
});

describe("outbox transport: file names", () => {
  test("a Message-ID with path separators or leading dots is written inside the outbox folder, under a safe name", async () => {
    const root = mkdtempSync(join(tmpdir(), "certkeeper-outbox-"));
    closers.push(() => rmSync(root, { recursive: true, force: true }));
    const dir = join(root, "outbox");
    const outbox = createOutboxTransport({ dir });
    await outbox.send({ ...message, messageId: "<../../escaped+ch_1@certkeeper>" });
    await outbox.send({ ...message, messageId: "<..hidden@certkeeper>" });
    await outbox.send({ ...message, messageId: "<x/../../climbed@certkeeper>" });
    expect(readdirSync(root)).toEqual(["outbox"]);
    const files = readdirSync(dir).sort();
    expect(files).toHaveLength(3);
    for (const file of files) {
      expect(file).not.toStartWith(".");
      expect(file).not.toContain("/");
      expect(file).toEndWith(".eml");
    }
    expect(existsSync(join(root, "..", "escaped+ch_1.eml"))).toBe(false);
    expect(existsSync(join(root, "..", "climbed.eml"))).toBe(false);
  });
});

describe("HTTP client (documents, CT logs): answer size", () => {
  const server = http.createServer((req, res) => {
    res.on("error", () => {});
    if (req.url === "/declared") {
      res.writeHead(200, { "content-length": String(5000) });
      res.end(Buffer.alloc(5000, 0x61));
      return;
    }
    // No length declared: chunked, 20 KB (five times the limit).
    res.writeHead(200);
    for (let i = 0; i < 20; i++) res.write(Buffer.alloc(1000, 0x61));
    res.end();
  });
  const listening = new Promise<number>((resolve) => server.listen(0, "127.0.0.1", () => resolve((server.address() as net.AddressInfo).port)));
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  closers.push(() => fetcher.close(), () => server.close());

  async function failure(path: string): Promise<FetchFailure | null> {
    const port = await listening;
    return fetcher.fetch({ url: `http://127.0.0.1:${port}${path}`, method: "GET" }, { timeoutMs: 3_000, maxBytes: 4_000 }).then(
      () => null,
      (error: FetchFailure) => error,
    );
  }

  test("an answer declared larger than allowed is refused by its declared length", async () => {
    const error = await failure("/declared");
    expect(error).toBeInstanceOf(FetchFailure);
    expect(error!.reason).toBe("too_large");
    expect(error!.message).toContain("declared 5000 bytes, more than the 4000 bytes allowed");
  });

  test("an answer of no declared length is cut off once it passes the limit, not at some multiple of it", async () => {
    const error = await failure("/chunked");
    expect(error).toBeInstanceOf(FetchFailure);
    expect(error!.reason).toBe("too_large");
    expect(error!.message).toContain("sent more than the 4000 bytes allowed");
  });
});
