/**
 * POST /v1/watches/{id}/poll (CONTRACT §15, the console's "Poll now"): it makes the watch due now
 * "unless a poll of it is already under way" — a poll asked for while another process holds the
 * watch's lease does not hand the watch to a second process at once (two requests for one watch at a
 * time). And it is the organization's: another organization's watch id is 404 watch_not_found and
 * that watch is not polled. On both stores.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, expectError, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
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
    async function world() {
      const clock = new FakeClock(Date.now());
      const h = await createHarness({ store, clock, transports, config: { ctUrl: ct.url, ctIntervalMs: 6 * 3_600_000 } });
      harnesses.push(h);
      const runDue = () => (h.core.services.watches as unknown as { runDue(): Promise<number> }).runDue();
      return { h, clock, runDue };
    }

    test("a poll asked for while another process polls the watch leaves it to that process", async () => {
      const { h, clock, runDue } = await world();
      const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: `busy-${store}.${TEST_DOMAIN}` } }), 201);
      await runDue(); // the first poll
      clock.advance(7 * 3_600_000);
      // Another process takes the watch (its lease runs a minute).
      const now = clock.now();
      const taken = await h.store.watches.claimDue({ owner: "proc_other", now, leaseUntil: now + 60_000, limit: 10 });
      expect(taken.map((w) => w.id)).toEqual([watch.id]);
      expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
      // Not due for anyone else while that poll is under way.
      expect(await h.store.watches.claimDue({ owner: "proc_third", now: clock.now(), leaseUntil: clock.now() + 60_000, limit: 10 })).toEqual([]);
    });

    test("another organization's watch: 404 watch_not_found, and that watch is not made due", async () => {
      const { h, clock, runDue } = await world();
      const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: `mine-${store}.${TEST_DOMAIN}` } }), 201);
      await runDue(); // the first poll: the next one is 6 hours away
      clock.advance(60_000);
      const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
      const stranger = await h.makeKey("owner", "live", other.id);
      expectError(await h.request("POST", `/v1/watches/${watch.id}/poll`, { key: stranger.key }), 404, "watch_not_found");
      expectError(await h.request("POST", `/v1/watches/${watch.id}/poll`, { key: h.keys.test.key }), 404, "watch_not_found");
      const before = ct.requests.length;
      await runDue();
      expect(ct.requests.length).toBe(before);
      // Its own organization's key may.
      expectData(await h.request("POST", `/v1/watches/${watch.id}/poll`), 200);
      await runDue();
      expect(ct.requests.length).toBeGreaterThan(before);
    });
  });
}
