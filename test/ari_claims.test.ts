/**
 * Processes sharing a database ask a CA once about a leaf (CONTRACT §19: the next request comes after
 * the answer's Retry-After, and answers are shared across processes): the asking one claims the leaf,
 * the others wait for its answer. A claim whose process died ends, and then another asks. A
 * directory without renewalInfo is shared like an answer, so no one waits out a claim for it. Two
 * AriClients on one store stand for two processes; the CA's ARI service is real HTTPS on loopback.
 */
import { expect, test } from "bun:test";
import { DAY } from "../core/base/mod.ts";
import { ariCacheKey } from "../core/ari/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { ariClients } from "./support/ari_clients.ts";

const TIMEOUT_MS = 300;
const { ari, client, leafOf: leafNamed, asked } = ariClients(TIMEOUT_MS);
const leafOf = () => leafNamed("claims.certkeeper.test");

test("two processes wanting one leaf at once: the CA is asked once, and both get its window", async () => {
  const { leaf } = await leafOf();
  const now = Date.now();
  ari().answer(leaf.certId, { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY, retryAfter: "21600" });
  const cache = createMemoryStore().renewalInfo;
  const [a, b] = await Promise.all([client(cache, "proc_a").renewalInfo(leaf, null, now), client(cache, "proc_b").renewalInfo(leaf, null, now)]);
  expect(asked(leaf.certId)).toBe(1);
  expect(a!.window).toEqual({ start: Math.floor((now + 50 * DAY) / 1000) * 1000, end: Math.floor((now + 52 * DAY) / 1000) * 1000 });
  expect(b!.window).toEqual(a!.window);
});

test("a claim whose process died: the other waits it out, then asks itself", async () => {
  const { leaf } = await leafOf();
  const now = Date.now();
  ari().answer(leaf.certId, { kind: "window", start: now + 50 * DAY, end: now + 52 * DAY });
  const cache = createMemoryStore().renewalInfo;
  // A process took the claim and died before asking.
  expect(await cache.claim(ariCacheKey(leaf), "proc_dead", now, now + 2 * TIMEOUT_MS + 1000, now + 2 * TIMEOUT_MS + 1000)).toBe(true);
  const started = performance.now();
  const info = await client(cache, "proc_b").renewalInfo(leaf, null, now);
  expect(performance.now() - started).toBeGreaterThanOrEqual(2 * TIMEOUT_MS + 900);
  expect(asked(leaf.certId)).toBe(1);
  expect(info!.window).not.toBeNull();
  expect(info!.lastError).toBeNull();
});

test("a directory without renewalInfo: the finding is shared, and the second process is not held for the first one's claim", async () => {
  const { leaf } = await leafOf();
  const now = Date.now();
  // An ACME directory without renewalInfo (a CA that publishes none).
  ari().directory(JSON.stringify({ newNonce: `${ari().directoryUrl}/nonce`, newAccount: `${ari().directoryUrl}/acct`, newOrder: `${ari().directoryUrl}/order` }));
  try {
    const cache = createMemoryStore().renewalInfo;
    const first = await client(cache, "proc_a").renewalInfo(leaf, null, now);
    expect(first!.window).toBeNull();
    const started = performance.now();
    const second = await client(cache, "proc_b").renewalInfo(leaf, null, now + 10);
    expect(second!.window).toBeNull();
    // Reading the cache takes milliseconds; the claim lasts 2 × 300 + 1,000 ms.
    expect(performance.now() - started).toBeLessThan(1000);
  } finally {
    ari().directory(null);
  }
});
