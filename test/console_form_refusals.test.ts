/**
 * Review (today): the console's channel and watch edit forms after this change.
 * - A webhook header line the form cannot read is refused with a message that quotes the whole line,
 *   so a secret typed into the headers comes back in the page even though withoutSecrets drops it
 *   from the textarea (CONTRACT §23: secrets shown once, then masked).
 * - An allowed issuer the API accepted with a line break (or surrounding spaces) is changed by saving
 *   the watch's edit form unchanged: the same loss the comma fix removed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import { formFields } from "./support/form_fields.ts";

let h: Harness;
let owner: WebUser;
let key: string;

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000, channels: 100, watches: 100 } as any });
  owner = await signedInUser(h, "owner");
  key = (await h.makeKey("owner", "live")).key;
});
afterAll(async () => {
  await h?.close();
});

describe("review: a refused channel edit never shows a secret typed into it", () => {
  test("a header line without a colon: the refused page does not carry the header's value", async () => {
    const ch = expectData(
      await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "Hook", config: { url: "https://hooks.example.com/in", headers: { Authorization: "Bearer t0ken" } } } }),
      201,
    ) as any;
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    const typed = "X-Api-Key sup3r-s3cret-value-1234";
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...fields, "config.headers": `Authorization: ********\n${typed}` });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('id="channel-form"');
    // withoutSecrets drops the textarea's typed value; the error message must not bring it back.
    expect(refused.text).not.toContain("sup3r-s3cret-value-1234");
  });

  test("adding: a header line without a colon: the refused page does not carry the header's value", async () => {
    const refused = await owner.browser.post(`/channels`, {
      mode: "live",
      type: "webhook",
      name: "New hook",
      "config.url": "https://hooks.example.com/new",
      "config.headers": "Authorization Bearer another-s3cret-t0ken",
    });
    expect(refused.status).toBe(400);
    expect(refused.text).not.toContain("another-s3cret-t0ken");
  });
});

describe("review: a watch's allowed issuers survive its edit form", () => {
  test("an issuer the API accepted with a line break survives saving the edit form unchanged", async () => {
    const issuers = ["Acme CA\nRegion 2", "Let's Encrypt"];
    const watch = expectData(await h.request("POST", "/v1/watches", { key, body: { domain: "linebreak.review.example", allowedIssuers: issuers } }), 201) as any;
    expect(watch.allowedIssuers).toEqual(issuers);
    const edit = await owner.browser.get(`/watches/${watch.id}/edit?mode=live`);
    const saved = await owner.browser.post(`/watches/${watch.id}/edit`, formFields(edit.text, `/watches/${watch.id}/edit`));
    expect(saved.status).toBe(303);
    const after = expectData(await h.request("GET", `/v1/watches/${watch.id}`, { key }), 200) as any;
    expect(after.allowedIssuers).toEqual(issuers);
  });
});

describe("review: a member's channel edit is refused for its role first (CONTRACT §3, §4: permission before validation)", () => {
  test("a member sending a header line without a colon gets 403 permission_denied, not the form's 400", async () => {
    const member = await signedInUser(h, "member");
    const ch = expectData(await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "Hook M", config: { url: "https://hooks.example.com/m" } } }), 201) as any;
    const edit = await member.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    const refused = await member.browser.post(`/channels/${ch.id}/edit`, { ...fields, "config.headers": "Authorization Bearer x" });
    expect(refused.status).toBe(403);
    const unchanged = await h.store.channels.get({ organizationId: h.org.id, mode: "live" }, ch.id);
    expect(unchanged!.config).toEqual({ url: "https://hooks.example.com/m" });
  });
});
