/**
 * CONTRACT §15: "A 429 is honoured through Retry-After (for that watch's next request)". A poll asked
 * for through the API (POST /v1/watches/{id}/poll, the console's "Poll now") right after such an
 * answer waits for its end; once it has passed, or after a failure that asked for no wait, it polls at
 * once. On both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { FakeClock } from "./support/fake_clock.ts";

let ct: CtServer;
let transports: ReturnType<typeof createTransports>;
const harnesses: Harness[] = [];
beforeAll(async () => {
  ct = await startCtServer();
  transports = await loopbackTransports();
});
afterAll(async () => {
  for (const h of harnesses) await h.close();
  await ct.close();
  await transports.close();
});

for (const store of ["memory", "libsql"] as const) {
  describe(`${store} store`, () => {
    test("a poll asked for after a 429 with Retry-After: 3600 waits for its end; after a 503 without one, it is at once", async () => {
      const clock = new FakeClock(Date.now());
      const h = await createHarness({ store, clock, transports, config: { ctUrl: ct.url, ctIntervalMs: 6 * 3_600_000 } });
      harnesses.push(h);
      const runDue = () => (h.core.services.watches as unknown as { runDue(): Promise<number> }).runDue();
      const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: `ra-${store}.${TEST_DOMAIN}` } }), 201);
      ct.fail(429, 1, "3600");
      const before = ct.requests.length;
      await runDue();
      expect(ct.requests.length - before).toBe(1);
      expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).lastError).toBe("The CT service asked to slow down (HTTP 429)");

      // Asked to poll within the hour: nothing is sent.
      clock.advance(60_000);
      expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
      await runDue();
      expect(ct.requests.length - before).toBe(1);
      // The hour over: the poll asked for earlier goes out (due at the wait's end, not the interval's).
      clock.advance(3_600_000);
      await runDue();
      expect(ct.requests.length - before).toBeGreaterThan(1);
      expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).lastError).toBeNull();

      // A failure that asked for no wait: a poll asked for goes out at once.
      ct.fail(503, 1);
      clock.advance(7 * 3_600_000);
      await runDue();
      const failed = ct.requests.length;
      expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).lastError).not.toBeNull();
      expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
      await runDue();
      expect(ct.requests.length).toBeGreaterThan(failed);
    });
  });
}
