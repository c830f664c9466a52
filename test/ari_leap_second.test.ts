/**
 * A renewal window whose start or end falls on a leap second (RFC 3339 5.6 allows `:60`; 5.7's example
 * is `1990-12-31T23:59:60Z`) is a well-formed answer (CONTRACT §19, RFC 9773 4.2: RFC 3339 times): it
 * is read as a window, the leap second as the instant after that minute's :59, not refused as
 * malformed (which fell back to the lifetime rule and counted the CA as failing). `:61` is no time.
 */
import { describe, expect, test } from "bun:test";
import { readRenewalInfo } from "../core/ari/renewal_answer.ts";

const body = (start: string, end: string) => new TextEncoder().encode(JSON.stringify({ suggestedWindow: { start, end } }));

describe("a suggested window with an RFC 3339 leap second", () => {
  test("an end at 23:59:60Z, or at :60 with an offset, is read as a window; :61 is malformed", () => {
    expect(readRenewalInfo(body("2016-12-30T00:00:00Z", "2016-12-31T23:59:60Z")).window).toEqual({ start: Date.UTC(2016, 11, 30), end: Date.UTC(2017, 0, 1) });
    expect(readRenewalInfo(body("2016-12-30T00:00:00Z", "2017-01-01T00:59:60.5+01:00")).window.end).toBe(Date.UTC(2017, 0, 1, 0, 0, 0, 500));
    expect(() => readRenewalInfo(body("2016-12-30T00:00:00Z", "2016-12-31T23:59:61Z"))).toThrow();
  });
});
