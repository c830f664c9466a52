/**
 * Imports keep the modes apart (CONTRACT §3: what a ck_test_ key creates is invisible to ck_live_ keys
 * of the same organization, and the reverse; plan limits count per organization and mode): a test
 * key's imports never trim the live mode's finished imports away, and its running imports never take
 * the live mode's places.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectData, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ store: "libsql" });
});
afterAll(() => h.close());

async function finishedImport(key: string): Promise<string> {
  // An item that fails validation: finished without a connection.
  const { id } = expectData(await h.request("POST", "/v1/imports", { key, body: { certificates: [{ domain: "not a domain" }] } }), 202);
  await h.core.services.imports!.loop.runDue();
  expect(expectData(await h.request("GET", `/v1/imports/${id}`, { key }), 200).status).toBe("finished");
  return id;
}

test("a ck_test_ key's imports do not make a live import disappear (404 import_not_found for the live key)", async () => {
  const live = await finishedImport(h.keys.owner.key);
  for (let i = 0; i < 21; i++) await finishedImport(h.keys.test.key);
  const again = await h.request("GET", `/v1/imports/${live}`, { key: h.keys.owner.key });
  expect({ status: again.status, body: again.body?.error ?? again.body?.data?.status }).toEqual({ status: 200, body: "finished" });
}, 60_000);

test("ten running imports of a ck_test_ key do not refuse a live key's import (429)", async () => {
  const other = await h.core.services.admin.createOrganization({ name: "Modes", plan: "enterprise" });
  const testKey = (await h.makeKey("owner", "test", other.id)).key;
  const liveKey = (await h.makeKey("owner", "live", other.id)).key;
  // Not run by a worker here: they stay running.
  for (let i = 0; i < 10; i++) expectData(await h.request("POST", "/v1/imports", { key: testKey, body: { certificates: [{ domain: "not a domain" }] } }), 202);
  const live = await h.request("POST", "/v1/imports", { key: liveKey, body: { certificates: [{ domain: "not a domain" }] } });
  expect({ status: live.status, code: live.body?.error?.code ?? null }).toEqual({ status: 202, code: null });
});
