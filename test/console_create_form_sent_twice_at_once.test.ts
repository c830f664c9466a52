/**
 * A create form sent twice at once (a double click, or the page reloaded while the first post still
 * runs) has the second wait for the first: it says "sent already" only if the first did create it;
 * when the first is refused, neither answer says the channel (or key) was added.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
const page = { accept: "text/html,application/xhtml+xml" };
beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

test("a create form sent twice at once and refused: neither answer says the channel was added", async () => {
  const form = await owner.browser.get("/channels/new?type=webhook&mode=live", page);
  const once = /name="once" value="([^"]+)"/.exec(form.text)![1]!;
  // Refused by the API (not an http(s) URL): nothing is created.
  const sent = { mode: "live", type: "webhook", name: "Twice hook", "config.url": "ftp://hooks.example.com/x", once };
  const [first, second] = await Promise.all([owner.browser.post("/channels", sent), owner.browser.post("/channels", sent)]);
  const channels = ((await h.request("GET", "/v1/channels?limit=100")).body.data as Array<{ name: string }>).filter((c) => c.name === "Twice hook");
  expect(channels).toHaveLength(0);
  expect(first.status).toBe(400);
  // The second must not claim that the channel exists ("was added then … in the list below").
  expect(second.text).not.toContain("the channel was added then");
});

test("an API key form sent twice at once and refused: neither answer says the key was created", async () => {
  const keys = await owner.browser.get("/settings/api-keys", page);
  const once = /name="once" value="([^"]+)"/.exec(keys.text)![1]!;
  const sent = { name: "", mode: "live", once };
  const [first, second] = await Promise.all([owner.browser.post("/settings/api-keys", sent), owner.browser.post("/settings/api-keys", sent)]);
  expect(first.status).toBe(400);
  expect(second.text).not.toContain("the key was created then");
});
