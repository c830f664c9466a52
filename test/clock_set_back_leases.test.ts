/**
 * Leases are wall-clock moments in the database. A process that took one on a clock running a day
 * ahead and died before NTP set the clock back (or that was killed after the step, before renewing on
 * the new clock) leaves a lease ending a day later than any is taken: another process does not wait
 * that day out. An import so leased is worked at once by the next worker; a live holder, which renews
 * on the new clock, is not disturbed, whatever its own lease length (an hour at least is allowed).
 */
import { afterEach, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
afterEach(async () => {
  await h?.core.services.imports?.stop();
  await h?.close();
});

/** An item that fails at once, without a connection (an unknown field). */
const invalid = { domain: `lease.${TEST_DOMAIN}`, bogus: 1 };

/** The import's status once it finished, or after `ms`. */
async function statusAfter(id: string, ms: number): Promise<string> {
  let status = "running";
  const deadline = Date.now() + ms;
  while (status === "running" && Date.now() < deadline) {
    await Bun.sleep(100);
    status = expectData(await h.request("GET", `/v1/imports/${id}`), 200).status;
  }
  return status;
}

test("a running server's worker takes over an import leased a day ahead by a process since gone, within seconds", async () => {
  h = await createHarness({ store: "libsql" });
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [invalid] } }), 202);
  const now = Date.now();
  await h.store.imports.claim({ owner: "proc_gone", now: now + DAY, leaseUntil: now + DAY + 15_000, limit: 10 });
  // The worker's own loop, as a server runs it (when it looks is its next due time's business).
  h.core.services.imports!.start();
  expect(await statusAfter(id, 4000)).toBe("finished");
}, 20_000);

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

test("an import a live process holds is left to it, even with a lease far longer than this process's (a longer TLS time limit)", async () => {
  h = await createHarness({ store: "libsql" });
  const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: [invalid] } }), 202);
  const now = Date.now();
  // CERTKEEPER_TLS_TIMEOUT=5m on that process: a lease of 15 minutes.
  const taken = await h.store.imports.claim({ owner: "proc_live", now, leaseUntil: now + 15 * 60_000, limit: 10 });
  expect(taken.map((record) => record.id)).toEqual([id]);
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("running");
});
