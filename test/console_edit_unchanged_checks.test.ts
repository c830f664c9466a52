/**
 * An edit form whose fields all equal what it showed is answered "Nothing was changed" without a
 * write, but still as a change asked for: refused to a member (CONTRACT §3: any write by a member is
 * refused, 403), and a 404 for a certificate that is not there (or is another organization's).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
let member: WebUser;
const page = { accept: "text/html,application/xhtml+xml" };
const unchanged = {
  mode: "live",
  name: "Old",
  "was.name": "Old",
  alertThresholds: "30, 14",
  "was.alertThresholds": "30, 14",
  tags: "a",
  "was.tags": "a",
  connectTo: "",
  "was.connectTo": "",
  mute: "",
};

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
  member = await signedInUser(h, "member");
});
afterAll(async () => {
  await h?.close();
});

test("a member's edit form is refused (403) whatever it holds, an unchanged one too", async () => {
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { name: "Old", tags: ["a"], alertThresholds: [30, 14] });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  await member.browser.get(`/certificates/${record.id}?mode=live`, page);
  // Changed: refused, as expected.
  expect((await member.browser.post(`/certificates/${record.id}/edit`, { ...unchanged, name: "New" })).status).toBe(403);
  // Unchanged: the same member, the same form, must be refused alike, not told "Nothing was changed".
  const same = await member.browser.post(`/certificates/${record.id}/edit`, unchanged);
  expect([same.status, same.headers.get("location")]).toEqual([403, null]);
});

test("an unchanged edit form for a certificate that does not exist is a 404, not a redirect saying nothing was changed", async () => {
  await owner.browser.get("/", page);
  const missing = await owner.browser.post("/certificates/cert_00000000000000000000/edit", unchanged);
  expect([missing.status, missing.headers.get("location")]).toEqual([404, null]);
});
