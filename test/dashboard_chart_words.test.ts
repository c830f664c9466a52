/**
 * The dashboard's chart of an organization with one certificate expiring in the next 12 weeks says "1
 * certificate expires in the next 12 weeks" (it said "expire"); several expire, and none: "No
 * certificate expires".
 */
import { describe, expect, test } from "bun:test";
import { expiryChart } from "../adapters/web/views/expiry_chart.ts";

const week = (i: number, count: number) => {
  const from = new Date(Date.parse("2026-11-29T19:44:40.934Z") + i * 7 * 86_400_000).toISOString();
  const until = new Date(Date.parse(from) + 7 * 86_400_000).toISOString();
  return { from, until, count };
};

describe("the dashboard's expiry chart in words", () => {
  test("one certificate: '1 certificate expires in the next 12 weeks'", () => {
    const text = String(expiryChart([week(0, 1), ...Array.from({ length: 11 }, (_, i) => week(i + 1, 0))], "live"));
    expect(text).toContain("1 certificate expires in the next 12 weeks");
  });
  test("two certificates: '2 certificates expire in the next 12 weeks'", () => {
    const text = String(expiryChart([week(0, 2), ...Array.from({ length: 11 }, (_, i) => week(i + 1, 0))], "live"));
    expect(text).toContain("2 certificates expire in the next 12 weeks");
  });
});
