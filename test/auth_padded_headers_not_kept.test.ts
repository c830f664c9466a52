/**
 * What a request with a bad key leaves behind: nothing in proportion to its headers. Anybody, without
 * an account, can make a well-formed key (its checksum is a CRC) and pad the Authorization header with
 * whitespace between "Bearer" and the key up to the server's header limit (256 KiB); judging 970 such
 * headers, each different, must not keep them (remembering each would pin about 250 MB).
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

test("unauthenticated requests with padded Authorization headers do not pin their headers in memory", async () => {
  const forged = generateApiKey("live").key; // well formed, belongs to nobody
  const padding = MAX_HEADER_BYTES - 8 * 1024; // fits under the server's header limit
  const send = async (i: number) => {
    const authorization = `Bearer${" ".repeat(padding - i)}${forged}`;
    const response = await h.app.handle(new Request("http://localhost/v1/certificates", { headers: { authorization } }));
    expect(response.status).toBe(401);
    await response.arrayBuffer();
  };
  for (let i = 0; i < 20; i++) await send(i);
  const before = heap();
  for (let i = 20; i < 990; i++) await send(i);
  const after = heap();
  const grewMb = (after - before) / 1e6;
  console.log(`heap after 970 unauthenticated requests: +${grewMb.toFixed(1)} MB`);
  expect(grewMb).toBeLessThan(20);
}, 120_000);
