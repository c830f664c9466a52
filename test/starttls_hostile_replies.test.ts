/**
 * STARTTLS replies at the edges of each protocol's rules (CONTRACT §12), against scripted servers on
 * 127.0.0.1: a refusal is `starttls_refused` and ends the exchange (nothing more is sent, no TLS tried
 * over a plain connection), a server that breaks the line limit is cut off (`tls_error`), and replies
 * the standards allow (SMTP's final "250" alone, IMAP's untagged data before the tagged OK, FTP's 120
 * before its 220) are read through to the upgrade.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startStarttlsServer, type Session, type StarttlsProtocol, type StarttlsServer } from "./support/starttls_servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { retrieveEndpoints } from "../core/tls/endpoint_retrieve.ts";

const DOMAIN = `mail.${TEST_DOMAIN}`;
const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
const XMPP_HEADER = `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='r1' from='${TEST_DOMAIN}' version='1.0' xml:lang='en'>`;
const servers: StarttlsServer[] = [];
let chain: { cert: string; key: string };

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
  chain = { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
});
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

const line = (t: string) => t.includes("\n");

/** Checks a scripted server of `protocol`; the endpoint's outcome: "ok", or its failure reason. */
async function outcome(protocol: StarttlsProtocol, script: (s: Session) => Promise<void>): Promise<{ result: string; server: StarttlsServer }> {
  const server = await startStarttlsServer(protocol, { ...chain, script: () => script });
  servers.push(server);
  const [endpoint] = await retrieveEndpoints(DOMAIN, server.port, {
    timeoutMs: 3000,
    protocol,
    rules: [{ pattern: DOMAIN, address: "127.0.0.1" }],
    allowPrivateTargets: true,
  });
  return { result: endpoint!.ok ? "ok" : endpoint!.reason, server };
}

describe("smtp", () => {
  test("a greeting other than 220 (554: no service) is a refusal, and no EHLO is sent", async () => {
    const { result, server } = await outcome("smtp", async (s) => {
      s.write("554 mx.test no SMTP service here\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250 STARTTLS\r\n");
      await s.read(line);
      s.write("220 go ahead\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(server.received().join("")).not.toContain("EHLO");
  });

  test("STARTTLS answered with 454 is a refusal, not a TLS handshake attempted over the plain connection", async () => {
    const { result } = await outcome("smtp", async (s) => {
      s.write("220 mx.test ESMTP\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250 STARTTLS\r\n");
      await s.read(line);
      s.write("454 4.7.0 TLS not available due to temporary reason\r\n");
      await s.read((t) => t.length > 0);
      s.socket.end();
    });
    expect(result).toBe("starttls_refused");
  });

  test('a multi-line EHLO reply whose last line is "250" alone (no text) is complete: the upgrade goes on', async () => {
    const { result } = await outcome("smtp", async (s) => {
      s.write("220 mx.test ESMTP\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250-STARTTLS\r\n250\r\n");
      await s.read(line);
      s.write("220 go ahead\r\n");
      s.upgrade();
    });
    expect(result).toBe("ok");
  });

  test("a 9000-byte greeting line that arrives whole with its line break is over the 8 KiB line limit: cut off", async () => {
    const { result } = await outcome("smtp", async (s) => {
      s.write(`220 ${"x".repeat(9000)}\r\n`);
      await s.read(line);
      s.write("250-mx.test\r\n250 STARTTLS\r\n");
      await s.read(line);
      s.write("220 go ahead\r\n");
      s.upgrade();
    });
    expect(result).toBe("tls_error");
  });
});

describe("imap", () => {
  test("untagged data (a CAPABILITY) before the tagged A1 OK is skipped: the upgrade goes on", async () => {
    const { result } = await outcome("imap", async (s) => {
      s.write("* OK IMAP4rev1 ready\r\n");
      await s.read(line);
      s.write("* CAPABILITY IMAP4rev1 STARTTLS\r\nA1 OK Begin TLS negotiation now\r\n");
      s.upgrade();
    });
    expect(result).toBe("ok");
  });
});

describe("greetings that refuse before any command", () => {
  test('pop3: a "-ERR" greeting is a refusal, and no STLS is sent', async () => {
    const { result, server } = await outcome("pop3", async (s) => {
      s.write("-ERR server too busy\r\n");
      await s.read(line);
      s.write("+OK begin TLS\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(server.received().join("")).not.toContain("STLS");
  });

  test('imap: a "* BYE" greeting is a refusal, and no STARTTLS is sent', async () => {
    const { result, server } = await outcome("imap", async (s) => {
      s.write("* BYE too many connections\r\n");
      await s.read(line);
      s.write("A1 OK Begin TLS negotiation now\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(server.received().join("")).not.toContain("STARTTLS");
  });
});

describe("ftp", () => {
  test('a 120 ("ready in a few minutes") before the 220 greeting is waited through: the upgrade goes on', async () => {
    const { result } = await outcome("ftp", async (s) => {
      s.write("120 ready in 1 minute\r\n220 ready\r\n");
      await s.read(line);
      s.write("234 AUTH TLS ok\r\n");
      s.upgrade();
    });
    expect(result).toBe("ok");
  });
});

describe("postgres", () => {
  test("an old server's error message (E) in answer to the SSLRequest is a refusal", async () => {
    const { result } = await outcome("postgres", async (s) => {
      await s.read((t) => t.length >= 8);
      const message = Buffer.from("SFATAL\0C08P01\0Munsupported frontend protocol\0\0", "latin1");
      const header = Buffer.alloc(5);
      header[0] = 0x45;
      header.writeUInt32BE(4 + message.length, 1);
      s.write(Buffer.concat([header, message]));
      s.socket.end();
    });
    expect(result).toBe("starttls_refused");
  });
});

describe("xmpp", () => {
  test("<starttls/> answered with <failure/> is a refusal (RFC 6120 §5.4.2.2), no TLS tried", async () => {
    const { result } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${XMPP_HEADER}<stream:features><starttls xmlns='${TLS_NS}'/></stream:features>`);
      await s.read((t) => t.includes("<starttls"));
      s.write(`<failure xmlns='${TLS_NS}'/>`);
      await s.read((t) => t.length > 0);
      s.socket.end();
    });
    expect(result).toBe("starttls_refused");
  });

  test("stream features still open after more than 8 KiB are cut off at once (tls_error), not waited on until the timeout", async () => {
    const { result } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      const padding = "<mechanism>PLAIN</mechanism>".repeat(400); // ~11 KiB, the features element not closed
      s.write(`${XMPP_HEADER}<stream:features><starttls xmlns='${TLS_NS}'/><mechanisms>${padding}`);
      // Waits for the client to hang up; a client still waiting for the rest would reach its timeout.
      await s.read(() => false).catch(() => {});
    });
    expect(result).toBe("tls_error");
  });

  test("a <starttls> in another namespace is no STARTTLS offer: refused, <starttls/> never sent", async () => {
    const { result, server } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${XMPP_HEADER}<stream:features><starttls xmlns='urn:example:not-tls'/></stream:features>`);
      await s.read((t) => t.includes("<starttls"));
      s.write(`<proceed xmlns='${TLS_NS}'/>`);
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(server.received().join("")).not.toContain("<starttls");
  });
});
