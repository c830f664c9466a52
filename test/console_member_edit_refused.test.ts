/**
 * docs/settings.md roles in the console: a member's edit of a certificate is refused (403) even when
 * the form changes nothing; an owner's unchanged form is told "nothing was changed".
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import { DAY } from "./support/pki.ts";

let h: Harness;
let owner: WebUser;
let member: WebUser;
let certificateId: string;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords });
  owner = await signedInUser(h, "owner");
  member = await signedInUser(h, "member");
  const now = Date.now();
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "unchanged.example.com", name: "Same", lastCheckedAt: now, notBefore: now - 30 * DAY, notAfter: now + 60 * DAY });
  await h.store.certificates.insert(record, { limit: 100, events: [] });
  certificateId = record.id;
});
afterAll(async () => {
  await h.close();
});

const unchanged = () => ({
  mode: "live",
  name: "Same",
  "was.name": "Same",
  alertThresholds: "30, 14, 7, 3, 1",
  "was.alertThresholds": "30, 14, 7, 3, 1",
  tags: "",
  "was.tags": "",
  connectTo: "",
  "was.connectTo": "",
});

test("an owner's unchanged edit form is told nothing was changed", async () => {
  await owner.browser.get(`/certificates/${certificateId}?mode=live`);
  const sent = await owner.browser.post(`/certificates/${certificateId}/edit`, unchanged());
  expect({ status: sent.status, location: sent.headers.get("location") }).toEqual({
    status: 303,
    location: `/certificates/${certificateId}?mode=live&notice=certificate-unchanged#edit`,
  });
});

test("a member's unchanged edit form is refused 403, not told nothing was changed", async () => {
  await member.browser.get(`/certificates/${certificateId}?mode=live`);
  const sent = await member.browser.post(`/certificates/${certificateId}/edit`, unchanged());
  expect(sent.status).toBe(403);
  expect(sent.headers.get("location")).toBeNull();
});
