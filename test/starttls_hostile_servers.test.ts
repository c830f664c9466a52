/**
 * Hostile STARTTLS servers (CONTRACT §12, docs/watching.md): an endless multi-line greeting sent a line
 * at a time is cut off once the exchange passes 64 KiB (`tls_error`), well before the timeout, however
 * small the pieces it arrives in; and a server that breaks the protocol (a reply that is not a
 * numbered one, an IMAP answer that is no tagged status, a connection closed mid-exchange) is a
 * `tls_error`: `starttls_refused` is kept for a server that answers "no" (core/starttls/mod.ts).
 */
import { describe, expect, test } from "bun:test";
import { scriptedStarttls } from "./support/starttls_scripted.ts";
import { TEST_DOMAIN } from "./support/harness.ts";

const DOMAIN = `hostile.${TEST_DOMAIN}`;
const TIMEOUT_MS = 4000;

const line = (t: string) => t.includes("\n");

const outcome = scriptedStarttls(DOMAIN, TIMEOUT_MS);

describe("an endless multi-line greeting", () => {
  test("sent one 100-byte line at a time, each after the last was taken: cut off past 64 KiB (tls_error), not at the timeout", async () => {
    let sent = 0;
    const { result, message, elapsed } = await outcome("smtp", async (s) => {
      const text = `220-${"x".repeat(94)}\r\n`;
      while (!s.socket.destroyed && sent < 4 * 1024 * 1024) {
        // One line per write, and the next only once the kernel has taken it: small pieces, never one big burst.
        const flushed = s.socket.write(text);
        sent += text.length;
        if (!flushed) await new Promise((resolve) => s.socket.once("drain", resolve));
        else await new Promise((resolve) => setImmediate(resolve));
      }
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("more than 65536 bytes")]);
    expect(elapsed).toBeLessThan(TIMEOUT_MS);
  });
});

describe("a server that breaks the protocol is a tls_error, not a refusal", () => {
  test("smtp: a greeting that is not a numbered reply (an HTTP server on port 25)", async () => {
    const { result, message } = await outcome("smtp", async (s) => {
      s.write("HTTP/1.1 400 Bad Request\r\n\r\n");
      await s.read(line).catch(() => {});
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("not a numbered reply")]);
  });

  test("imap: an answer to STARTTLS that is neither untagged nor A1's tagged status", async () => {
    const { result, message } = await outcome("imap", async (s) => {
      s.write("* OK IMAP4rev1 ready\r\n");
      await s.read(line);
      s.write("+ go ahead\r\n");
      await s.read(line).catch(() => {});
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining('answered "+ go ahead" to STARTTLS')]);
  });

  test("pop3: the connection closed after the greeting, before the answer to STLS", async () => {
    const { result, message } = await outcome("pop3", async (s) => {
      s.write("+OK POP3 ready\r\n");
      await s.read(line);
      s.socket.end();
    });
    expect([result, message]).toEqual(["tls_error", expect.stringContaining("closed the connection during the STARTTLS exchange")]);
  });
});
