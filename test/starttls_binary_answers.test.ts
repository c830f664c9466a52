/**
 * Binary STARTTLS answers (CONTRACT §12) that are no upgrade, where a one-line change of core/starttls
 * went unnoticed: a PostgreSQL answer to the SSLRequest other than S, N or E; a MySQL initial
 * handshake of a protocol version other than 10 (even with bits that would read as CLIENT_SSL); an
 * LDAP answer in BER's indefinite length form (RFC 4511 §5.1 forbids it); an LDAP ExtendedResponse
 * whose resultCode ENUMERATED is empty. None may lead to a TLS handshake over the plain connection,
 * and each ends at once, not at the timeout. Against scripted servers on 127.0.0.1.
 */
import { describe, expect, test } from "bun:test";
import type { Session } from "./support/starttls_servers.ts";
import { scriptedStarttls, untilHangUp } from "./support/starttls_scripted.ts";
import { TEST_DOMAIN } from "./support/harness.ts";

const DOMAIN = `db.${TEST_DOMAIN}`;
const TIMEOUT_MS = 3000;

const outcome = scriptedStarttls(DOMAIN, TIMEOUT_MS);

describe("postgres", () => {
  test("an answer byte other than S, N or E is a broken protocol: no TLS handshake, ended at once", async () => {
    const { result, message, elapsed, sent } = await outcome("postgres", async (s) => {
      await s.read((t) => t.length >= 8);
      s.write("X");
      await untilHangUp(s);
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("answered the SSLRequest with byte 88")]);
    expect(sent.length).toBe(8); // the SSLRequest, and no ClientHello after it
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});

describe("mysql", () => {
  test("a handshake of protocol version 9 has no TLS: refused, no SSL request sent, even when its bytes read as CLIENT_SSL", async () => {
    // Laid out like a version 10 packet, whose capability bytes would offer CLIENT_SSL.
    const payload = Buffer.concat([Buffer.from([9]), Buffer.from("4.0.0-old\0", "latin1"), Buffer.from([1, 0, 0, 0]), Buffer.from("abcdefgh", "latin1"), Buffer.from([0, 0xff, 0xff, 0x21, 2, 0])]);
    const { result, message, sent } = await outcome("mysql", async (s) => {
      s.write(Buffer.concat([Buffer.from([payload.length, 0, 0, 0]), payload]));
      const bytes = Buffer.from(await s.read((text) => text.length >= 36), "latin1");
      s.upgrade(bytes.subarray(36));
    });
    expect([result, message]).toEqual(["starttls_refused", expect.stringContaining("protocol version 9")]);
    expect(sent.length).toBe(0);
  });
});

describe("ldap", () => {
  const OID = "1.3.6.1.4.1.1466.20037";
  const tlv = (tag: number, ...content: Buffer[]): Buffer => {
    const body = Buffer.concat(content);
    return Buffer.concat([Buffer.from([tag, body.length]), body]);
  };
  const request = (s: Session) => s.read((text) => text.length >= 2 && text.length >= 2 + text.charCodeAt(1));

  test("an answer in BER's indefinite length form (RFC 4511 §5.1 forbids it) is a broken protocol, ended at once", async () => {
    const inner = Buffer.concat([tlv(0x02, Buffer.from([1])), tlv(0x78, tlv(0x0a, Buffer.from([0])), tlv(0x04), tlv(0x04), tlv(0x8a, Buffer.from(OID, "latin1")))]);
    const indefinite = Buffer.concat([Buffer.from([0x30, 0x80]), inner, Buffer.from([0, 0])]);
    const { result, message, elapsed } = await outcome("ldap", async (s) => {
      await request(s);
      s.write(indefinite);
      await untilHangUp(s);
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("malformed LDAP message")]);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });

  test("a success answered under another message ID than the StartTLS request's (RFC 4511 §4.1.1.1) is a broken protocol: no upgrade", async () => {
    const answer = tlv(0x30, tlv(0x02, Buffer.from([2])), tlv(0x78, tlv(0x0a, Buffer.from([0])), tlv(0x04), tlv(0x04), tlv(0x8a, Buffer.from(OID, "latin1"))));
    const { result, message } = await outcome("ldap", async (s) => {
      await request(s);
      s.write(answer);
      s.upgrade();
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("message ID 2")]);
  });

  test("an ExtendedResponse whose resultCode is an empty ENUMERATED says no success: no upgrade", async () => {
    const answer = tlv(0x30, tlv(0x02, Buffer.from([1])), tlv(0x78, tlv(0x0a), tlv(0x04), tlv(0x04), tlv(0x8a, Buffer.from(OID, "latin1"))));
    const { result, message } = await outcome("ldap", async (s) => {
      await request(s);
      s.write(answer);
      s.upgrade();
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("without a result code")]);
  });
});
