/**
 * The exact steps of each STARTTLS upgrade (CONTRACT §12) where a one-line change of core/starttls
 * went unnoticed: replies the standards allow (SMTP's reply code alone, RFC 5321 §4.2; IMAP's status
 * in lower case, RFC 9051 §9 is case-insensitive), and answers that are no upgrade and must end the
 * exchange without sending more (an SMTP extension that only begins with STARTTLS, RFC 3207 §4's 220
 * and nothing else, IMAP's PREAUTH greeting after which STARTTLS is not allowed, RFC 9051 §6.2.1, an
 * FTP greeting other than 220, RFC 4217 §4), and a server that resets the connection mid-exchange.
 * Against scripted servers on 127.0.0.1.
 */
import { describe, expect, test } from "bun:test";
import { scriptedStarttls, untilHangUp } from "./support/starttls_scripted.ts";
import { TEST_DOMAIN } from "./support/harness.ts";

const DOMAIN = `mail.${TEST_DOMAIN}`;
const TIMEOUT_MS = 3000;

const line = (t: string) => t.includes("\n");

const outcome = scriptedStarttls(DOMAIN, TIMEOUT_MS);

describe("smtp (RFC 5321, RFC 3207)", () => {
  test('a greeting that is the reply code "220" alone (no text) is a greeting: the upgrade goes on', async () => {
    const { result, sent } = await outcome("smtp", async (s) => {
      s.write("220\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250 STARTTLS\r\n");
      await s.read(line);
      s.write("220 go ahead\r\n");
      s.upgrade();
    });
    expect(result).toBe("ok");
    expect(sent).toBe("EHLO certkeeper.invalid\r\nSTARTTLS\r\n");
  });

  test("an extension whose keyword only begins with STARTTLS (STARTTLSX) is no offer: refused, STARTTLS never sent", async () => {
    const { result, sent } = await outcome("smtp", async (s) => {
      s.write("220 mx.test ESMTP\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250-STARTTLSX\r\n250 8BITMIME\r\n");
      await s.read(line);
      s.write("220 go ahead\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(sent).toBe("EHLO certkeeper.invalid\r\n");
  });

  test("STARTTLS answered with 250 instead of 220 is no upgrade: refused, no TLS handshake over the plain connection", async () => {
    const { result, sent, elapsed } = await outcome("smtp", async (s) => {
      s.write("220 mx.test ESMTP\r\n");
      await s.read(line);
      s.write("250-mx.test\r\n250 STARTTLS\r\n");
      await s.read(line);
      s.write("250 2.0.0 OK\r\n");
      await untilHangUp(s);
    });
    expect(result).toBe("starttls_refused");
    expect(sent).toBe("EHLO certkeeper.invalid\r\nSTARTTLS\r\n");
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});

describe("imap (RFC 9051)", () => {
  test("a PREAUTH greeting (already authenticated: STARTTLS is not allowed) is a refusal, and STARTTLS is never sent", async () => {
    const { result, sent } = await outcome("imap", async (s) => {
      s.write("* PREAUTH IMAP4rev1 logged in as guest\r\n");
      await s.read(line);
      s.write("A1 OK Begin TLS negotiation now\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(sent).toBe("");
  });

  test('the tagged status in lower case ("A1 ok") is the same OK: the upgrade goes on', async () => {
    const { result } = await outcome("imap", async (s) => {
      s.write("* OK IMAP4rev1 ready\r\n");
      await s.read(line);
      s.write("A1 ok begin TLS negotiation now\r\n");
      s.upgrade();
    });
    expect(result).toBe("ok");
  });
});

describe("ftp (RFC 959, RFC 4217)", () => {
  test('a greeting other than 220 ("421 too many users") is a refusal, and AUTH TLS is never sent', async () => {
    const { result, sent } = await outcome("ftp", async (s) => {
      s.write("421 Too many users, try later\r\n");
      await s.read(line);
      s.write("234 AUTH TLS ok\r\n");
      s.upgrade();
    });
    expect(result).toBe("starttls_refused");
    expect(sent).toBe("");
  });
  test("AUTH TLS answered with 334 (RFC 2228: security data needed) instead of 234 is no upgrade: refused, no TLS handshake tried", async () => {
    const { result, sent, elapsed } = await outcome("ftp", async (s) => {
      s.write("220 ftp.test ready\r\n");
      await s.read(line);
      s.write("334 ADAT required\r\n");
      await untilHangUp(s);
    });
    expect(result).toBe("starttls_refused");
    expect(sent).toBe("AUTH TLS\r\n");
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});

describe("xmpp (RFC 6120, XML 1.0)", () => {
  const TLS_NS = "urn:ietf:params:xml:ns:xmpp-tls";
  const header = (version = "version='1.0' ") =>
    `<?xml version='1.0'?><stream:stream xmlns='jabber:client' xmlns:stream='http://etherx.jabber.org/streams' id='r1' from='${TEST_DOMAIN}' ${version}xml:lang='en'>`;

  test("features whose end tag has a space before its > (XML's ETag allows it) are complete: the upgrade goes on", async () => {
    const { result } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${header()}<stream:features><starttls xmlns='${TLS_NS}'/></stream:features >`);
      await s.read((t) => t.includes("<starttls"));
      s.write(`<proceed xmlns='${TLS_NS}'/>`);
      s.upgrade();
    });
    expect(result).toBe("ok");
  });

  test("a namespace declared with spaces around = (xmlns = '…', XML's Eq) is the TLS namespace: the upgrade goes on", async () => {
    const { result } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${header()}<stream:features><starttls xmlns = '${TLS_NS}'/></stream:features>`);
      await s.read((t) => t.includes("<starttls"));
      s.write(`<proceed xmlns='${TLS_NS}'/>`);
      s.upgrade();
    });
    expect(result).toBe("ok");
  });

  test("a stream error and then <proceed/> in answer to <starttls/>: the stream ended first, so it is a refusal, no TLS tried", async () => {
    const { result, message } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${header()}<stream:features><starttls xmlns='${TLS_NS}'/></stream:features>`);
      await s.read((t) => t.includes("<starttls"));
      s.write(`<stream:error><policy-violation xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error><proceed xmlns='${TLS_NS}'/>`);
      s.upgrade();
    });
    expect([result, message]).toEqual(["starttls_refused", expect.stringContaining("with a stream error")]);
  });

  test("a stream announcing version 0.9 (RFC 6120 §4.7.5: no features) is refused at once, not waited on until the timeout", async () => {
    const { result, elapsed } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(header("version='0.9' "));
      await untilHangUp(s);
    });
    expect(result).toBe("starttls_refused");
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });

  test("a stream error instead of features, the connection left open, is refused at once", async () => {
    const { result, message, elapsed } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${header()}<stream:error><host-unknown xmlns='urn:ietf:params:xml:ns:xmpp-streams'/></stream:error>`);
      await untilHangUp(s);
    });
    expect([result, message]).toEqual(["starttls_refused", expect.stringContaining("closed the stream with an error")]);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });

  test("the stream closed (</stream:stream>) instead of features, the connection left open, is refused at once", async () => {
    const { result, elapsed } = await outcome("xmpp", async (s) => {
      await s.read((t) => t.includes("<stream:stream"));
      s.write(`${header()}</stream:stream>`);
      await untilHangUp(s);
    });
    expect(result).toBe("starttls_refused");
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});

describe("a server that resets the connection", () => {
  test("a reset (RST) after the greeting ends the exchange at once as a broken protocol, not at the timeout", async () => {
    const { result, message, elapsed } = await outcome("smtp", async (s) => {
      s.write("220 mx.test ESMTP\r\n");
      await s.read(line);
      s.socket.resetAndDestroy();
    });
    expect(result).toBe("tls_error");
    expect(message).toMatch(/closed the connection during the STARTTLS exchange/);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});
