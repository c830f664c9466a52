/**
 * What one organization's finished imports keep is bounded. Every item of an import stays in the
 * database with its outcome; items that fail create nothing and count against no plan limit, so
 * without a bound one organization could grow the shared database file, within its rate limit, until
 * the disk is full (10,000 invalid items of 2 MB a request kept 3.7 MB of database each, 90 days).
 * An organization keeps its last 20 finished imports: an older one is 404 `import_not_found`; and it
 * runs at most 10 at once (both modes): one more is 429 `rate_limit_exceeded` with Retry-After, storing
 * nothing, until one has finished.
 */
import { afterEach, expect, test } from "bun:test";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "libsql";
import { createHarness, expectData, expectError, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const databaseBytes = (dir: string) => readdirSync(dir).reduce((sum, name) => sum + statSync(join(dir, name)).size, 0);
/** An item that fails at once, without a connection (an unknown field). */
const invalid = (i: number) => ({ domain: `b${i}.bounded.${TEST_DOMAIN}`, bogus: i });

test("an organization keeps its last 20 finished imports; older ones are gone, other organizations' stay", async () => {
  h = await createHarness({ store: "libsql" });
  const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
  const otherKey = await h.makeKey("owner", "live", other.id);
  const kept = expectData(await h.request("POST", "/v1/imports", { key: otherKey.key, body: { certificates: [invalid(0)] } }), 202).id;
  const ids: string[] = [];
  for (let i = 0; i < 23; i++) {
    ids.push(expectData(await h.request("POST", "/v1/imports", { body: { certificates: [invalid(i)] } }), 202).id);
    await h.core.services.imports!.loop.runDue();
  }
  // Trimmed as each import is posted: the newest 20 finished, the 23rd finished after its own post.
  for (const id of ids.slice(0, 2)) expectError(await h.request("GET", `/v1/imports/${id}`), 404, "import_not_found");
  for (const id of ids.slice(2)) expect(expectData(await h.request("GET", `/v1/imports/${id}`), 200).status).toBe("finished");
  expect(expectData(await h.request("GET", `/v1/imports/${kept}`, { key: otherKey.key }), 200).status).toBe("finished");
}, 60_000);

test("imports posted again and again: what the organization keeps stops growing after the first rounds", async () => {
  h = await createHarness({ store: "libsql" });
  // 500 invalid items a request: each import stores and judges them all.
  const body = JSON.stringify({ certificates: Array.from({ length: 500 }, (_, i) => ({ ...invalid(i), name: "x".repeat(140) })) });
  const post = () =>
    h.app.handle(new Request("http://localhost/v1/imports", { method: "POST", headers: { authorization: `Bearer ${h.keys.owner.key}`, "content-type": "application/json" }, body }));
  /** Ten requests, then the worker judges them. */
  const round = async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await post()).status);
    await h.core.services.imports!.loop.runDue();
    return statuses.filter((status) => status === 202).length;
  };
  const db = new Database(join(h.dir!, "test.db"), { readonly: true });
  const kept = () => db.prepare("SELECT (SELECT COUNT(*) FROM imports), (SELECT COUNT(*) FROM import_items)").raw(true).all([])[0] as number[];
  for (let r = 0; r < 3; r++) expect(await round()).toBe(10);
  // 30 imports: the last 20 finished before the round's first post are kept, and the round's 10.
  expect(kept()).toEqual([30, 15_000]);
  const settled = databaseBytes(h.dir!);
  for (let r = 0; r < 2; r++) expect(await round()).toBe(10);
  expect(kept()).toEqual([30, 15_000]);
  db.close();
  // The space of the imports deleted is used again (the write-ahead log moves with checkpoints: logged only).
  console.log(`20 more imports of ${(body.length / 1e6).toFixed(2)} MB after the first 30: the database's files went from ${(settled / 1e6).toFixed(1)} MB to ${(databaseBytes(h.dir!) / 1e6).toFixed(1)} MB`);
}, 120_000);

test("an organization runs at most 10 imports at once in each mode: the 11th is 429 with Retry-After and stores nothing; a finished one frees a place; other organizations are not held", async () => {
  h = await createHarness({ store: "libsql" });
  const post = (key?: string, i = 0) => h.request("POST", "/v1/imports", { ...(key ? { key } : {}), body: { certificates: [invalid(i)] } });
  const ids: string[] = [];
  // Ten in each mode (the worker is not running: all stay running).
  for (let i = 0; i < 20; i++) ids.push(expectData(await post(i % 2 ? h.keys.test.key : undefined, i), 202).id);
  for (const [key, mode] of [[undefined, "live"], [h.keys.test.key, "test"]] as const) {
    const refused = await post(key, 99);
    expectError(refused, 429, "rate_limit_exceeded");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    // As every 429 (CONTRACT §8): nothing more now, however many requests the key has left.
    expect(refused.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(refused.body.error.message).toContain(`10 ${mode} imports running`);
  }
  const db = new Database(join(h.dir!, "test.db"), { readonly: true });
  expect(db.prepare("SELECT COUNT(*) FROM imports").raw(true).all([])[0]).toEqual([20]);
  db.close();
  // Another organization is not held by this one's ten.
  const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
  const otherKey = await h.makeKey("owner", "live", other.id);
  expectData(await post(otherKey.key), 202);
  // Once they have finished, the organization may import again.
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${ids[0]}`), 200).status).toBe("finished");
  const again = expectData(await post(), 202);
  expect(again.status).toBe("running");
}, 60_000);
