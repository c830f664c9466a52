/**
 * Leases are wall-clock moments in the database. A process that took one on a clock running a day
 * ahead and died before NTP set the clock back (or that was killed after the step, before renewing on
 * the new clock) leaves a lease ending a day later than any is taken: another process does not wait
 * that day out. An import so leased is worked at once by the next worker; a live holder, which renews
 * on the new clock, is not disturbed.
 */
import { afterEach, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** An item that fails at once, without a connection (an unknown field). */
const invalid = { domain: `lease.${TEST_DOMAIN}`, bogus: 1 };

test("an import leased a day ahead by a process since gone is worked by the next worker at once", async () => {
  h = await createHarness({ store: "libsql" });
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [invalid] } }), 202);
  const now = Date.now();
  // The process whose clock ran a day ahead took it, then died.
  const taken = await h.store.imports.claim({ owner: "proc_gone", now: now + DAY, leaseUntil: now + DAY + 15_000, limit: 10 });
  expect(taken.map((record) => record.id)).toEqual([id]);
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200)).toMatchObject({ status: "finished", failed: 1 });
});

test("an import a live process holds (its lease within the longest one taken) is left to it", async () => {
  h = await createHarness({ store: "libsql" });
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [invalid] } }), 202);
  const now = Date.now();
  const taken = await h.store.imports.claim({ owner: "proc_live", now, leaseUntil: now + 60_000, limit: 10 });
  expect(taken.map((record) => record.id)).toEqual([id]);
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("running");
});
