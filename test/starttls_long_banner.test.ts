/**
 * A long multi-line SMTP or FTP reply (a banner of many short lines, as some FTP servers print their
 * message of the day) is read as long as each line fits in 8 KiB and the whole exchange in 64 KiB
 * (docs/watching.md): a 20 KiB greeting upgrades; a 70 KiB one is cut off (`tls_error`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { chainPem, createLeaf } from "./support/pki.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const closers: Array<() => void> = [];
let h: Harness;
let tlsPort = 0;

interface Session {
  socket: net.Socket;
  read(until: (text: string) => boolean): Promise<string>;
  write(data: string): void;
  upgrade(): void;
}
type Script = (s: Session) => Promise<void>;

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  const tlsSide = tls.createServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }, (s) => {
    s.on("error", () => {});
    s.end();
  });
  tlsSide.on("tlsClientError", () => {});
  await new Promise<void>((r) => tlsSide.listen(0, "127.0.0.1", () => r()));
  tlsPort = (tlsSide.address() as net.AddressInfo).port;
  closers.push(() => tlsSide.close());
  h = await createHarness();
});
afterAll(async () => {
  closers.forEach((close) => close());
  await h.close();
});

/** A plain-text server running `current.script` on each connection (changeable between checks). */
async function scriptedServer(first: Script): Promise<{ port: number; current: { script: Script } }> {
  const current = { script: first };
  const server = net.createServer((socket) => {
    socket.on("error", () => {});
    let buffer = "";
    let waiting: (() => void) | null = null;
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("latin1");
      waiting?.();
    };
    socket.on("data", onData);
    const session: Session = {
      socket,
      async read(until) {
        while (!until(buffer)) {
          if (socket.destroyed) throw new Error("closed");
          await new Promise<void>((resolve) => {
            waiting = resolve;
            socket.once("close", resolve);
          });
        }
        const text = buffer;
        buffer = "";
        return text;
      },
      write: (data) => void socket.write(data),
      upgrade() {
        socket.pause();
        socket.off("data", onData);
        const relay = net.connect(tlsPort, "127.0.0.1", () => {
          socket.pipe(relay);
          relay.pipe(socket);
        });
        relay.on("error", () => socket.destroy());
        socket.on("close", () => relay.destroy());
      },
    };
    current.script(session).catch(() => socket.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  closers.push(() => server.close());
  return { port: (server.address() as net.AddressInfo).port, current };
}

const line = (t: string) => t.includes("\n");
/** 20 KiB of continuation lines of one reply (each line short), then its last line. */
const longReply = (code: number) => `${code}-${"x".repeat(76)}\r\n`.repeat(256) + `${code} ready\r\n`;

const smtp = (greeting: string): Script => async (s) => {
  s.write(greeting);
  await s.read(line);
  s.write("250-mx.test\r\n250 STARTTLS\r\n");
  await s.read(line);
  s.write("220 2.0.0 go ahead\r\n");
  s.upgrade();
};
const ftp = (greeting: string): Script => async (s) => {
  s.write(greeting);
  await s.read(line);
  s.write("234 AUTH TLS ok\r\n");
  s.upgrade();
};

async function checkAfter(name: string, protocol: string, first: Script, then: Script) {
  const server = await scriptedServer(first);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `${name}.${TEST_DOMAIN}`, port: server.port, protocol } }), 201);
  server.current.script = then;
  const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
  return { status: checked.status, statusReason: checked.statusReason, endpointReason: checked.endpoints[0].statusReason };
}

const READ = { status: "valid", statusReason: null, endpointReason: null };
const CUT_OFF = { status: "unreachable", statusReason: "tls_error", endpointReason: "tls_error" };
const hugeReply = (code: number) => `${code}-${"x".repeat(76)}\r\n`.repeat(900) + `${code} ready\r\n`;

test("smtp: a 20 KiB multi-line 220 greeting upgrades; a 70 KiB one is cut off", async () => {
  expect(longReply(220).length).toBeGreaterThan(20 * 1024);
  expect(await checkAfter("smtp-long", "smtp", smtp("220 mx.test ESMTP\r\n"), smtp(longReply(220)))).toEqual(READ);
  expect(await checkAfter("smtp-huge", "smtp", smtp("220 mx.test ESMTP\r\n"), smtp(hugeReply(220)))).toEqual(CUT_OFF);
});

test("ftp: a 20 KiB multi-line 220 greeting upgrades; a 70 KiB one is cut off", async () => {
  expect(await checkAfter("ftp-long", "ftp", ftp("220 ready\r\n"), ftp(longReply(220)))).toEqual(READ);
  expect(await checkAfter("ftp-huge", "ftp", ftp("220 ready\r\n"), ftp(hugeReply(220)))).toEqual(CUT_OFF);
});
