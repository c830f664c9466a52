/**
 * The console's forms turned into the API's bodies (docs/console.md): a webhook header line without a
 * name is refused by its line number, never echoing what it holds (it may be a secret); allowed issuers
 * are one per line, since a name such as "GoDaddy.com, Inc." holds a comma.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000, channels: 100, watches: 100 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

test("a webhook header line with a value but no name is refused by its number, the value not shown, and no channel is added", async () => {
  await owner.browser.get("/channels/new?type=webhook&mode=live");
  const before = (expectData(await h.request("GET", "/v1/channels?limit=100"), 200) as any[]).length;
  const answer = await owner.browser.post("/channels", {
    mode: "live",
    type: "webhook",
    name: "Nameless header",
    "config.url": "http://127.0.0.1:8080/hook",
    "config.headers": "X-Ok: fine\n: n0-name-s3cret",
  });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("Header line 2 is not written as Name: value.");
  expect(answer.text).not.toContain("n0-name-s3cret");
  expect((expectData(await h.request("GET", "/v1/channels?limit=100"), 200) as any[]).length).toBe(before);
});

test("allowed issuers are one per line: an issuer whose name holds a comma stays one issuer", async () => {
  await owner.browser.get("/watches?mode=live");
  const added = await owner.browser.post("/watches", {
    mode: "live",
    domain: "issuers-comma.example",
    allowedIssuers: "GoDaddy.com, Inc.\r\nLet's Encrypt",
  });
  expect(added.headers.get("location")).toBe("/watches?mode=live&notice=watch-added");
  const watch = (expectData(await h.request("GET", "/v1/watches?limit=100"), 200) as any[]).find((w) => w.domain === "issuers-comma.example");
  expect(watch.allowedIssuers).toEqual(["GoDaddy.com, Inc.", "Let's Encrypt"]);
});
