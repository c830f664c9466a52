/**
 * The one-time `once` field of the create forms (CONTRACT §23: an API key, a channel with a signing
 * secret) is one form's, of one user: another organization's user sending an id first
 * must not make this user's form "sent already" (nothing created, a false claim that the key was shown),
 * and a value that no form of ours carries (60 KB of text) must not be kept in the server's memory,
 * where 10,000 of them (the ids kept) would hold some 600 MB.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { signedInUser, shownKey, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
let stranger: WebUser;
const page = { accept: "text/html,application/xhtml+xml" };
const onceIn = (html: string) => /name="once" value="([^"]+)"/.exec(html)![1]!;
/** Whether a page answers "this form was sent already" (kept short in a failure's message). */
const saysSentAlready = (html: string) => html.includes("This form was sent already");

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
  const otherOrg = await h.core.services.admin.createOrganization({ name: "Other org", plan: "enterprise" });
  stranger = await signedInUser(h, "admin", otherOrg.id);
});
afterAll(async () => {
  await h?.close();
});

test("a once id sent first by another organization's user does not make this user's API key form 'sent already'", async () => {
  const form = await owner.browser.get("/settings/api-keys", page);
  const once = onceIn(form.text);
  await stranger.browser.get("/settings/api-keys", page);
  // The other organization's admin sends the id first (with a key of their own).
  expect((await stranger.browser.post("/settings/api-keys", { name: "theirs", mode: "live", once })).status).toBe(200);

  const before = (await h.store.apiKeys.list(h.org.id)).length;
  const sent = await owner.browser.post("/settings/api-keys", { name: "ours", mode: "live", once });
  // This user's form was sent once: their key is created and shown, not "sent already".
  expect(saysSentAlready(sent.text)).toBe(false);
  expect(() => shownKey(sent.text)).not.toThrow();
  expect((await h.store.apiKeys.list(h.org.id)).length).toBe(before + 1);
});

test("a once id sent first by another organization's user does not make this user's channel form 'sent already'", async () => {
  const form = await owner.browser.get("/channels/new?type=webhook&mode=live", page);
  const once = onceIn(form.text);
  await stranger.browser.get("/channels/new?type=webhook&mode=live", page);
  const theirs = { mode: "live", type: "webhook", name: "Their hook", "config.url": "https://hooks.example.com/theirs", once };
  expect((await stranger.browser.post("/channels", theirs)).status).toBe(200);

  const ours = { mode: "live", type: "webhook", name: "Our hook", "config.url": "https://hooks.example.com/ours", once };
  const sent = await owner.browser.post("/channels", ours);
  expect(saysSentAlready(sent.text)).toBe(false);
  expect(sent.text.includes("whsec_")).toBe(true);
  const channels = (await h.store.channels.list({ organizationId: h.org.id, mode: "live" }, { limit: 100 })) as unknown;
  expect(JSON.stringify(channels).includes("Our hook")).toBe(true);
});

test("a once value no form carries (60 KB of text) is not kept: sent again, it is not 'sent already'", async () => {
  await stranger.browser.get("/settings/api-keys", page);
  const huge = "A".repeat(60_000);
  await stranger.browser.post("/settings/api-keys", { name: "big once", mode: "live", once: huge });
  // Refused or ignored, either is safe; kept (and so answered "sent already") is 60 KB of this process's memory per post.
  const again = await stranger.browser.post("/settings/api-keys", { name: "big once again", mode: "live", once: huge });
  expect(saysSentAlready(again.text)).toBe(false);
});
