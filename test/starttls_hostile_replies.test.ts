/**
 * STARTTLS replies at the edges of each protocol's rules (CONTRACT §12), against scripted servers on
 * 127.0.0.1: a refusal is `starttls_refused` and ends the exchange (nothing more is sent, no TLS tried
 * over a plain connection), a server that breaks the line limit is cut off (`tls_error`), and replies
 * the standards allow (SMTP's final "250" alone, IMAP's untagged data before the tagged OK, FTP's 120
 * before its 220) are read through to the upgrade. An LDAP answer is read by its elements' tags, and a
 * MySQL handshake packet cut short is a broken protocol (`tls_error`), not a server without TLS.
 */
import { describe, expect, test } from "bun:test";
import type { Session } from "./support/starttls_servers.ts";
import { scriptedStarttls } from "./support/starttls_scripted.ts";
import { TEST_DOMAIN } from "./support/harness.ts";

const DOMAIN = `mail.${TEST_DOMAIN}`;
const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
const XMPP_HEADER = `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='r1' from='${TEST_DOMAIN}' version='1.0' xml:lang='en'>`;

const line = (t: string) => t.includes("\n");

const outcome = scriptedStarttls(DOMAIN, 3000);

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

describe("ldap", () => {
  const OID = "1.3.6.1.4.1.1466.20037";
  const tlv = (tag: number, ...content: Buffer[]): Buffer => {
    const body = Buffer.concat(content);
    return Buffer.concat([Buffer.from([tag, body.length]), body]);
  };
  /** A StartTLS answer with each element's tag as given (RFC 4511 4.14.2: SEQUENCE { messageID INTEGER, [APPLICATION 24] { resultCode ENUMERATED, ... } }). */
  const reply = (tags: { message?: number; id?: number; op?: number; result?: number }, code = 0, messageId = 1) =>
    tlv(
      tags.message ?? 0x30,
      tlv(tags.id ?? 0x02, Buffer.from([messageId])),
      tlv(tags.op ?? 0x78, tlv(tags.result ?? 0x0a, Buffer.from([code])), tlv(0x04), tlv(0x04), tlv(0x8a, Buffer.from(OID, "latin1"))),
    );
  /** Answers the StartTLS request with `answer`, then hands the socket to TLS as if it had accepted. */
  const answering = (answer: Buffer) => async (s: Session) => {
    await s.read((text) => text.length >= 2 && text.length >= 2 + text.charCodeAt(1));
    s.write(answer);
    s.upgrade();
  };

  test("a success answer with every element tagged as RFC 4511 has it is the upgrade", async () => {
    expect((await outcome("ldap", answering(reply({})))).result).toBe("ok");
  });

  test("an answer whose message is no SEQUENCE, whose message ID is no INTEGER, whose operation is no ExtendedResponse or whose result code is no ENUMERATED is no upgrade", async () => {
    const cases: Array<[Parameters<typeof reply>[0], string]> = [
      [{ message: 0x31 }, "did not answer with an LDAP message"],
      [{ id: 0x04 }, "without a message ID"],
      [{ op: 0x61 }, "did not answer StartTLS with an ExtendedResponse"],
      [{ result: 0x02 }, "without a result code"],
    ];
    for (const [tags, said] of cases) {
      const { result, message } = await outcome("ldap", answering(reply(tags)));
      expect({ tags, result, said: message.includes(said) }).toEqual({ tags, result: "tls_error", said: true });
    }
  });

  test("a result code other than success, and a notice of disconnection (message ID 0), are refusals", async () => {
    const refused = await outcome("ldap", answering(reply({}, 2)));
    expect([refused.result, refused.message]).toEqual(["starttls_refused", expect.stringContaining("result code 2")]);
    const notice = await outcome("ldap", answering(reply({}, 0, 0)));
    expect([notice.result, notice.message]).toEqual(["starttls_refused", expect.stringContaining("notice of disconnection")]);
  });
});

describe("mysql", () => {
  /** A handshake packet (protocol 10) cut after `keep` bytes of its payload; the whole one offers CLIENT_SSL. */
  const handshake = (keep = Infinity): Buffer => {
    const capabilities = 0x0001 | 0x0200 | 0x0800 | 0x8000;
    const whole = Buffer.concat([Buffer.from([10]), Buffer.from("8.0.36-fixture\0", "latin1"), Buffer.from([1, 0, 0, 0]), Buffer.from("abcdefgh", "latin1"), Buffer.from([0, capabilities & 0xff, capabilities >> 8, 0x21, 2, 0])]);
    const payload = whole.subarray(0, Math.min(keep, whole.length));
    return Buffer.concat([Buffer.from([payload.length, 0, 0, 0]), payload]);
  };
  const answering = (packet: Buffer) => async (s: Session) => {
    s.write(packet);
    // The client sends its ClientHello right after the 36-byte SSL request.
    const bytes = Buffer.from(await s.read((text) => text.length >= 36), "latin1");
    s.upgrade(bytes.subarray(36));
  };

  test("a handshake packet cut short before its capabilities, or its version never ended, is a broken protocol, not a server without TLS", async () => {
    expect((await outcome("mysql", answering(handshake()))).result).toBe("ok");
    // Version (15 bytes), connection id (4), auth data (8), filler (1): the capabilities would follow.
    const cut = await outcome("mysql", answering(handshake(1 + 15 + 4 + 8 + 1 + 1)));
    expect([cut.result, cut.message]).toEqual(["tls_error", expect.stringContaining("truncated handshake packet")]);
    const unended = await outcome("mysql", answering(handshake(1 + 14)));
    expect([unended.result, unended.message]).toEqual(["tls_error", expect.stringContaining("truncated handshake packet")]);
  });

  test("an error packet instead of the handshake is a refusal naming the server's message", async () => {
    const error = Buffer.concat([Buffer.from([0xff, 0x10, 0x04]), Buffer.from("#08004Too many connections", "latin1")]);
    const { result, message } = await outcome("mysql", answering(Buffer.concat([Buffer.from([error.length, 0, 0, 0]), error])));
    expect([result, message]).toEqual(["starttls_refused", expect.stringContaining('"Too many connections"')]);
  });
});
