/**
 * Two small readers at their edges. retryAfterMs(): a date already past is a wait of 0, never a
 * negative one; `fractions: false` reads delay-seconds as RFC 9110 writes them (`1*DIGIT`), so "1.5"
 * is then unreadable. isEmailAddress(): the local part is at most 64 characters and the whole address
 * at most 254 (RFC 5321 §4.5.3.1.1 and its erratum 1690).
 */
import { describe, expect, test } from "bun:test";
import { retryAfterMs } from "../core/net/retry_after.ts";
import { isEmailAddress } from "../core/net/email_address.ts";

describe("retryAfterMs()", () => {
  const now = Date.UTC(2031, 4, 1, 12, 0, 0);

  test("an HTTP-date in the past is a wait of 0", () => {
    expect(retryAfterMs("Thu, 01 May 2031 11:58:00 GMT", now)).toBe(0);
    expect(retryAfterMs("Thu, 01 May 2031 12:02:00 GMT", now)).toBe(120_000);
  });

  test("fractions of seconds are read unless the caller says the header has none", () => {
    expect(retryAfterMs("1.5", now)).toBe(1500);
    expect(retryAfterMs("1.5", now, { fractions: false })).toBeNull();
    expect(retryAfterMs("2", now, { fractions: false })).toBe(2000);
  });
});

describe("isEmailAddress(): lengths", () => {
  const domain = "example.com";

  test("a local part of 64 characters is an address; 65 is not", () => {
    expect(isEmailAddress(`${"a".repeat(64)}@${domain}`)).toBe(true);
    expect(isEmailAddress(`${"a".repeat(65)}@${domain}`)).toBe(false);
  });

  test("an address of 254 characters is an address; 255 is not", () => {
    const at = (length: number) => {
      // "ops@" then labels of 50 letters and dots up to `length`, ending in ".com"
      const head = "ops@";
      const tail = ".com";
      let middle = "";
      while (head.length + middle.length + tail.length < length) {
        const room = length - head.length - middle.length - tail.length;
        const label = "d".repeat(Math.min(50, middle ? room - 1 : room));
        middle += middle ? `.${label}` : label;
      }
      return head + middle + tail;
    };
    expect(at(254).length).toBe(254);
    expect(at(255).length).toBe(255);
    expect(isEmailAddress(at(254))).toBe(true);
    expect(isEmailAddress(at(255))).toBe(false);
  });
});
