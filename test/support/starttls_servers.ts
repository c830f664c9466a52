/**
 * Plain-text servers that upgrade to TLS the way each protocol's standard says, byte for byte (SMTP
 * RFC 3207, IMAP RFC 9051, POP3 RFC 2595, FTP RFC 4217, PostgreSQL's SSLRequest, MySQL's SSL request,
 * LDAP RFC 4511 StartTLS, XMPP RFC 6120), for tests. Each can also refuse the upgrade or misbehave.
 * A test checks every fixture against `openssl s_client -starttls`, so they speak what real clients
 * speak. Listening on 127.0.0.1 (or another loopback address).
 */
import net from "node:net";
import tls from "node:tls";
import type { Protocol } from "../../core/starttls/mod.ts";

export type StarttlsProtocol = Exclude<Protocol, "tls">;

/** ok: the upgrade; refuse: the protocol's own "no"; silent: accept and never send a byte. */
export type Behaviour = "ok" | "refuse" | "silent";

export interface StarttlsServer {
  port: number;
  /** What clients sent before the upgrade, per connection (to prove nothing more than the upgrade was sent). */
  received(): string[];
  connections(): number;
  close(): Promise<void>;
}

export interface Session {
  socket: net.Socket;
  /** Waits for the client's next bytes matching `until`, returns everything read so far and clears it. */
  read(until: (text: string) => boolean): Promise<string>;
  write(data: string | Uint8Array): void;
  /** Hands the socket to TLS; `early`: bytes already read that belong to the handshake. */
  upgrade(early?: Buffer): void;
}

type Script = (s: Session, behaviour: Behaviour) => Promise<void>;

const line = (text: string) => text.includes("\n");

const SCRIPTS: Record<StarttlsProtocol, Script> = {
  async smtp(s, behaviour) {
    s.write("220 fixture.test ESMTP ready\r\n");
    const ehlo = await s.read(line);
    if (!/^EHLO /i.test(ehlo)) return void s.write("500 5.5.1 EHLO first\r\n");
    s.write(`250-fixture.test greets you\r\n250-PIPELINING\r\n${behaviour === "ok" ? "250-STARTTLS\r\n" : ""}250 8BITMIME\r\n`);
    const command = await s.read(line);
    if (/^STARTTLS\r?\n$/i.test(command) && behaviour === "ok") {
      s.write("220 2.0.0 Ready to start TLS\r\n");
      return s.upgrade();
    }
    s.write(/^QUIT/i.test(command) ? "221 2.0.0 Bye\r\n" : "502 5.5.1 Unrecognized command\r\n");
  },
  async imap(s, behaviour) {
    s.write(`* OK [CAPABILITY IMAP4rev1 ${behaviour === "ok" ? "STARTTLS " : ""}LOGINDISABLED] fixture ready\r\n`);
    for (;;) {
      const command = await s.read(line);
      const [tag, verb] = command.trim().split(" ");
      if (verb?.toUpperCase() === "CAPABILITY") {
        s.write(`* CAPABILITY IMAP4rev1 ${behaviour === "ok" ? "STARTTLS " : ""}LOGINDISABLED\r\n${tag} OK CAPABILITY completed\r\n`);
        continue;
      }
      if (verb?.toUpperCase() === "STARTTLS" && behaviour === "ok") {
        s.write(`${tag} OK Begin TLS negotiation now\r\n`);
        return s.upgrade();
      }
      return void s.write(`${tag} BAD Unknown command\r\n`);
    }
  },
  async pop3(s, behaviour) {
    s.write("+OK POP3 fixture ready\r\n");
    for (;;) {
      const command = (await s.read(line)).trim().toUpperCase();
      if (command === "CAPA") {
        s.write(`+OK Capability list follows\r\nUSER\r\n${behaviour === "ok" ? "STLS\r\n" : ""}.\r\n`);
        continue;
      }
      if (command === "STLS" && behaviour === "ok") {
        s.write("+OK Begin TLS negotiation\r\n");
        return s.upgrade();
      }
      return void s.write("-ERR Unknown command\r\n");
    }
  },
  async ftp(s, behaviour) {
    s.write("220-fixture FTP server\r\n220 ready\r\n");
    const command = (await s.read(line)).trim().toUpperCase();
    if (command === "AUTH TLS" && behaviour === "ok") {
      s.write("234 AUTH TLS successful\r\n");
      return s.upgrade();
    }
    s.write("502 Command not implemented\r\n");
  },
  async postgres(s, behaviour) {
    const request = Buffer.from(await s.read((text) => text.length >= 8), "latin1");
    if (request.readUInt32BE(0) !== 8 || request.readUInt32BE(4) !== 80877103) return void s.socket.destroy();
    if (behaviour !== "ok") return void s.write("N");
    s.write("S");
    s.upgrade();
  },
  async mysql(s, behaviour) {
    const capabilities = 0x0001 | 0x0200 | 0x8000 | 0x80000 | (behaviour === "ok" ? 0x0800 : 0);
    const payload = Buffer.concat([
      Buffer.from([10]),
      Buffer.from("8.0.36-fixture\0", "latin1"),
      Buffer.from([1, 0, 0, 0]), // connection id
      Buffer.from("abcdefgh", "latin1"), // auth-plugin-data part 1
      Buffer.from([0]),
      Buffer.from([capabilities & 0xff, (capabilities >> 8) & 0xff]),
      Buffer.from([0x21, 2, 0]), // charset, status flags
      Buffer.from([(capabilities >> 16) & 0xff, (capabilities >> 24) & 0xff]),
      Buffer.from([21]), // auth-plugin-data length
      Buffer.alloc(10),
      Buffer.from("ijklmnopqrst\0", "latin1"),
      Buffer.from("caching_sha2_password\0", "latin1"),
    ]);
    s.write(Buffer.concat([Buffer.from([payload.length & 0xff, (payload.length >> 8) & 0xff, payload.length >> 16, 0]), payload]));
    // The client sends its ClientHello right after the SSL request, without waiting for an answer.
    const bytes = Buffer.from(await s.read((text) => text.length >= 36), "latin1");
    const request = bytes.subarray(0, 36);
    // 32 bytes and CLIENT_SSL: the SSL request; anything else would be a login attempt.
    if (request[0] !== 32 || request[1] !== 0 || request[3] !== 1 || (request.readUInt32LE(4) & 0x0800) === 0) return void s.socket.destroy();
    if (behaviour === "ok") s.upgrade(bytes.subarray(36));
  },
  async ldap(s, behaviour) {
    const request = Buffer.from(await s.read((text) => text.length >= 2 && text.length >= 2 + text.charCodeAt(1)), "latin1");
    const oid = "1.3.6.1.4.1.1466.20037";
    if (request[0] !== 0x30 || !request.includes(Buffer.from(oid, "latin1")) || !request.includes(0x77)) return void s.socket.destroy();
    const id = request.subarray(2, 5); // 02 01 <id>
    const code = behaviour === "ok" ? 0 : 2; // success, or protocolError as servers without StartTLS answer
    const name = Buffer.concat([Buffer.from([0x8a, oid.length]), Buffer.from(oid, "latin1")]);
    const op = Buffer.concat([Buffer.from([0x0a, 1, code, 0x04, 0, 0x04, 0]), behaviour === "ok" ? name : Buffer.alloc(0)]);
    const body = Buffer.concat([id, Buffer.from([0x78, op.length]), op]);
    s.write(Buffer.concat([Buffer.from([0x30, body.length]), body]));
    if (behaviour === "ok") s.upgrade();
  },
  async xmpp(s, behaviour) {
    const header = await s.read((text) => /<stream:stream[^>]*>/.test(text));
    const to = /to=['"]([^'"]+)['"]/.exec(header)?.[1] ?? "fixture.test";
    s.write(
      `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='fixture1' from='${to}' version='1.0' xml:lang='en'>` +
        `<stream:features>${behaviour === "ok" ? "<starttls xmlns='urn:ietf:params:xml:ns:xmpp-tls'><required/></starttls>" : ""}` +
        "<mechanisms xmlns='urn:ietf:params:xml:ns:xmpp-sasl'><mechanism>PLAIN</mechanism></mechanisms></stream:features>",
    );
    if (behaviour !== "ok") return;
    const command = await s.read((text) => /<starttls\b[^>]*\/>|<\/starttls>/.test(text));
    if (!command.includes("urn:ietf:params:xml:ns:xmpp-tls")) return void s.write("<failure xmlns='urn:ietf:params:xml:ns:xmpp-tls'/></stream:stream>");
    s.write("<proceed xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>");
    s.upgrade();
  },
};

/**
 * A server of `protocol` that upgrades to TLS with `cert`/`key` (or refuses, or stays silent); with
 * `script`, each connection runs the script it gives at that moment instead (a server that changes
 * behaviour between checks).
 */
export async function startStarttlsServer(
  protocol: StarttlsProtocol,
  options: { cert: string; key: string; behaviour?: Behaviour; host?: string; port?: number; script?: () => (s: Session) => Promise<void> },
): Promise<StarttlsServer> {
  const behaviour = options.behaviour ?? "ok";
  // The TLS side runs in its own server; an upgraded connection is relayed to it byte for byte, so
  // handshake bytes a client sent early (MySQL's ClientHello follows its SSL request at once) are kept.
  const tlsSide = tls.createServer({ cert: options.cert, key: options.key }, (secure) => {
    secure.on("error", () => {});
    secure.end();
  });
  tlsSide.on("tlsClientError", () => {});
  await new Promise<void>((resolve) => tlsSide.listen(0, "127.0.0.1", () => resolve()));
  const tlsPort = (tlsSide.address() as net.AddressInfo).port;
  const sockets = new Set<net.Socket>();
  const received: string[] = [];
  let count = 0;
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    if (behaviour === "silent") return;
    const index = received.push("") - 1;
    let buffer = "";
    let waiting: (() => void) | null = null;
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString("latin1");
      received[index] += chunk.toString("latin1");
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
          waiting = null;
        }
        const text = buffer;
        buffer = "";
        return text;
      },
      write: (data) => void socket.write(data),
      upgrade(early) {
        // Hold the ClientHello until the relay is connected; pipe() resumes the socket.
        socket.pause();
        socket.off("data", onData);
        if (early && early.length > 0) received[index] = received[index]!.slice(0, received[index]!.length - early.length);
        const relay = net.connect(tlsPort, "127.0.0.1", () => {
          if (early && early.length > 0) relay.write(early);
          socket.pipe(relay);
          relay.pipe(socket);
        });
        relay.on("error", () => socket.destroy());
        socket.on("close", () => relay.destroy());
      },
    };
    (options.script ? options.script()(session) : SCRIPTS[protocol](session, behaviour)).catch(() => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => [...received],
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        tlsSide.close();
        server.close(() => resolve());
      }),
  };
}

/**
 * A hostile plain-text server: `endless` sends an SMTP-style continued greeting forever, `huge` one
 * line of a megabyte without an end, `drip` one byte every 200 ms. Counts the bytes it managed to send.
 */
/**
 * `endless`: an SMTP greeting that never ends; `huge`: a line of a megabyte; `drip`: a byte every 200 ms;
 * `xmpp-tags`: after the client's stream header, 63,000 bytes of unclosed `<error ` tags in one burst,
 * under the exchange's limit (what a pattern that backtracks from every `<` takes seconds over).
 */
export async function startHostileServer(kind: "endless" | "huge" | "drip" | "xmpp-tags"): Promise<StarttlsServer & { bytesSent(): number }> {
  const sockets = new Set<net.Socket>();
  let count = 0;
  let sent = 0;
  const server = net.createServer((socket) => {
    count++;
    sockets.add(socket);
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
    if (kind === "xmpp-tags") {
      socket.once("data", () => {
        const burst = "<error ".repeat(9000);
        sent += burst.length;
        socket.write(burst);
      });
      return;
    }
    if (kind === "drip") {
      const timer = setInterval(() => (socket.destroyed ? clearInterval(timer) : (socket.write("2"), sent++)), 200);
      socket.on("close", () => clearInterval(timer));
      return;
    }
    const chunk = kind === "endless" ? "220-fixture greeting that never ends, line after line after line\r\n".repeat(64) : "x".repeat(16 * 1024);
    const limit = kind === "huge" ? 1024 * 1024 : Infinity;
    const pump = () => {
      while (!socket.destroyed && sent < limit) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once("drain", pump);
      }
    };
    pump();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  return {
    port: (server.address() as net.AddressInfo).port,
    received: () => [],
    connections: () => count,
    bytesSent: () => sent,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
