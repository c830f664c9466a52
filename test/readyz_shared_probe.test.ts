/**
 * `/readyz` needs no key, and each answer rests on a small write to the database. Requests arriving
 * while a probe is under way share it: a flood of them is one write at a time (ahead of the API's own
 * writes on a database server), not one each; each answers as that probe went, and the next request
 * after it makes a fresh one.
 */
import { afterEach, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { StorageUnavailableError, type Store } from "../core/store/ports.ts";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A memory store whose probe writes are counted and held until `open()`; `fail()` makes the next ones refuse. */
function heldProbes() {
  const store = createMemoryStore();
  let probes = 0;
  let open = () => {};
  let failing = false;
  const wrapped: Store = {
    ...store,
    ping: async () => {
      probes++;
      await new Promise<void>((resolve) => (open = resolve));
      if (failing) throw new StorageUnavailableError("full");
    },
  };
  return { store: wrapped, probes: () => probes, open: () => open(), fail: () => (failing = true) };
}

test("50 requests at once while a probe is under way: one probe write, 50 answers of 200; the next request probes again", async () => {
  const held = heldProbes();
  h = await createHarness({ store: held.store });
  const answers = Array.from({ length: 50 }, () => h!.app.handle(new Request("http://localhost/readyz")));
  await Bun.sleep(50);
  expect(held.probes()).toBe(1);
  held.open();
  expect((await Promise.all(answers)).map((response) => response.status)).toEqual(Array(50).fill(200));
  const next = h.app.handle(new Request("http://localhost/readyz"));
  await Bun.sleep(20);
  expect(held.probes()).toBe(2);
  held.open();
  expect((await next).status).toBe(200);
});

test("a shared probe the database refuses: every request sharing it answers 503 with the reason", async () => {
  const held = heldProbes();
  h = await createHarness({ store: held.store });
  held.fail();
  const answers = Array.from({ length: 5 }, () => h!.app.handle(new Request("http://localhost/readyz")));
  await Bun.sleep(50);
  expect(held.probes()).toBe(1);
  held.open();
  for (const response of await Promise.all(answers)) {
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "unavailable", reason: "The database refuses writes: its disk is full." });
  }
});
