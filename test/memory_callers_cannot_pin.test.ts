/**
 * What a caller's requests leave behind in memory is not the caller's to choose (each test: the heap
 * after many requests with ever-new values, against the heap after a few):
 *
 * - a bad key's headers: anybody, without an account, can make a well-formed key (its checksum is a
 *   CRC) and pad the Authorization header with whitespace between "Bearer" and the key up to the
 *   server's header limit (256 KiB); judging 970 such headers, each different, must not keep them
 *   (remembering each would pin about 250 MB);
 * - list filters: the read cache keeps list pages under their query, at most 5,000 of them;
 *   `GET /v1/certificates?domain=<7 KiB>` with a new value each time (the query may be 8 KiB), 4,000
 *   times (under a minute of the enterprise plan's rate), must not keep them (kept, they pinned about
 *   60 MB).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { heapStats } from "bun:jsc";
import { createHarness, type Harness } from "./support/harness.ts";
import { generateApiKey } from "../core/auth/api_key.ts";
import { MAX_HEADER_BYTES } from "../adapters/elysia/server.ts";

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

/** How many MB the heap grew over requests `first` to `last` (exclusive), after requests 0 to `first` warmed up. */
async function heapGrowthMb(send: (i: number) => Promise<void>, first: number, last: number): Promise<number> {
  for (let i = 0; i < first; i++) await send(i);
  const before = heap();
  for (let i = first; i < last; i++) await send(i);
  return (heap() - before) / 1e6;
}

test("unauthenticated requests with padded Authorization headers do not pin their headers in memory", async () => {
  const forged = generateApiKey("live").key; // well formed, belongs to nobody
  const padding = MAX_HEADER_BYTES - 8 * 1024; // fits under the server's header limit
  const grewMb = await heapGrowthMb(
    async (i) => {
      const authorization = `Bearer${" ".repeat(padding - i)}${forged}`;
      const response = await h.app.handle(new Request("http://localhost/v1/certificates", { headers: { authorization } }));
      expect(response.status).toBe(401);
      await response.arrayBuffer();
    },
    20,
    990,
  );
  console.log(`heap after 970 unauthenticated requests: +${grewMb.toFixed(1)} MB`);
  expect(grewMb).toBeLessThan(20);
}, 120_000);

test("list pages filtered by ever-new domain values do not pin them in memory", async () => {
  const grewMb = await heapGrowthMb(
    async (i) => {
      const domain = `${String(i).padStart(8, "0")}${"d".repeat(7 * 1024)}`;
      const response = await h.app.handle(new Request(`http://localhost/v1/certificates?domain=${domain}`, { headers: { authorization: `Bearer ${h.keys.member.key}` } }));
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    },
    10,
    4010,
  );
  console.log(`heap after 4000 list pages with new domain filters: +${grewMb.toFixed(1)} MB`);
  expect(grewMb).toBeLessThan(20);
}, 120_000);
