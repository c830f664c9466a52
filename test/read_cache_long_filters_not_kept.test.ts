/**
 * The read cache keeps list pages under their query, at most 5,000 of them: what one keeps must not be
 * the caller's to choose. `GET /v1/certificates?domain=<7 KiB>`, with a new value each time (the query
 * may be 8 KiB), 4,000 times (under a minute of the enterprise plan's rate): the heap grows by less than
 * 20 MB (kept, they pinned about 60 MB).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ store: "libsql" });
});
afterAll(() => h.close());

function heap(): number {
  Bun.gc(true);
  Bun.gc(true);
  return heapStats().heapSize;
}

test("list pages filtered by ever-new domain values do not pin them in memory", async () => {
  const send = async (i: number) => {
    const domain = `${String(i).padStart(8, "0")}${"d".repeat(7 * 1024)}`;
    const response = await h.app.handle(new Request(`http://localhost/v1/certificates?domain=${domain}`, { headers: { authorization: `Bearer ${h.keys.member.key}` } }));
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  };
  for (let i = 0; i < 10; i++) await send(i);
  const before = heap();
  for (let i = 10; i < 4010; i++) await send(i);
  const after = heap();
  const grewMb = (after - before) / 1e6;
  console.log(`heap after 4000 list pages with new domain filters: +${grewMb.toFixed(1)} MB`);
  expect(grewMb).toBeLessThan(20);
}, 120_000);
