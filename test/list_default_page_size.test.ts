/** CONTRACT §5: a list asked without `limit` answers pages of 20 (the default), with a cursor to the rest. */
import { expect, test } from "bun:test";
import { createHarness, expectData } from "./support/harness.ts";

test("GET /v1/channels without limit: 20 items and a next cursor; the next page holds the 21st", async () => {
  const own = await createHarness();
  try {
    for (let i = 0; i < 21; i++) {
      expectData(await own.request("POST", "/v1/channels", { body: { type: "email", name: `c${i}`, config: { email: `c${i}@acme.test` } } }), 201);
    }
    const first = await own.request("GET", "/v1/channels");
    expect(expectData(first, 200)).toHaveLength(20);
    expect(typeof first.body.meta.nextCursor).toBe("string");
    const second = await own.request("GET", `/v1/channels?cursor=${first.body.meta.nextCursor}`);
    expect(expectData(second, 200)).toHaveLength(1);
    expect(second.body.meta.nextCursor).toBeNull();
  } finally {
    await own.close();
  }
});
