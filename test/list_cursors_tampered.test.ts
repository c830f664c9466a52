/**
 * List pages and cursors (CONTRACT §4, §5): `limit` defaults to 20, and a cursor that is empty or was
 * tampered with (a number that is no whole number, a value of another type, an element dropped or added, over 200 characters) is 400
 * invalid_request, never a page and never a 500, on both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness, type StoreKind } from "./support/harness.ts";

const encode = (position: unknown) => Buffer.from(JSON.stringify(position)).toString("base64url");
const decode = (cursor: string) => JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown[];

describe.each(["memory", "libsql"] as StoreKind[])("%s store", (store) => {
  let h: Harness;
  let cursor: string;
  beforeAll(async () => {
    h = await createHarness({ store });
    for (let i = 0; i < 21; i++) {
      expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: `Ops ${i}`, config: { email: `ops${i}@example.com` } } }), 201);
    }
  });
  afterAll(() => h.close());

  test("without limit a page holds 20 items, and its cursor leads to the 21st", async () => {
    const first = await h.request("GET", "/v1/channels");
    expect(expectData(first, 200)).toHaveLength(20);
    cursor = first.body.meta.nextCursor;
    expect(typeof cursor).toBe("string");
    const second = await h.request("GET", `/v1/channels?cursor=${encodeURIComponent(cursor)}`);
    expect(expectData(second, 200)).toHaveLength(1);
    expect(second.body.meta.nextCursor).toBeNull();
  });

  test("an empty cursor is invalid_request naming the cursor, not the first page", async () => {
    const response = await h.request("GET", "/v1/channels?cursor=");
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"cursor"');
  });

  test("a tampered cursor is invalid_request, never a page or a 500", async () => {
    const position = decode(cursor);
    const numberAt = position.findIndex((value) => typeof value === "number");
    expect(numberAt).toBeGreaterThan(1);
    const withNumber = (value: number) => position.map((item, i) => (i === numberAt ? value : item));
    const tampered = [
      encode(withNumber(1.5)),
      encode(withNumber(2 ** 60)),
      encode(position.slice(0, -1)),
      encode([...position, "extra"]),
      encode(position.map((item, i) => (i === numberAt ? String(item) : item))),
      encode(position.map((item, i) => (i === position.length - 1 ? 7 : item))),
      encode(position.map((item, i) => (i === position.length - 1 ? `ch_${"a".repeat(250)}` : item))),
    ];
    for (const bad of tampered) {
      const response = await h.request("GET", `/v1/channels?cursor=${encodeURIComponent(bad)}`);
      expectError(response, 400, "invalid_request");
      expect(response.body.error.message).toContain('"cursor"');
    }
  });
});
