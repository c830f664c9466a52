/**
 * The console's channel and watch forms when refused: a secret typed into a webhook header never comes
 * back in the page (the message names the line by its number); an allowed issuer is one line, so the
 * one-per-line form keeps the list as it was; a member is refused for the role before the form is read.
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

describe("a refused channel edit never shows a secret typed into it", () => {
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

describe("a watch's allowed issuers survive its edit form", () => {
  test("an issuer with a line break is refused by the API, so the one-per-line form never splits one", async () => {
    const refused = await h.request("POST", "/v1/watches", { key, body: { domain: "linebreak.sentence.example", allowedIssuers: ["Acme CA\nRegion 2"] } });
    expect(refused.status).toBe(400);
    const issuers = ["Acme CA, Region 2", "Let's Encrypt"];
    const watch = expectData(await h.request("POST", "/v1/watches", { key, body: { domain: "linebreak.sentence.example", allowedIssuers: issuers } }), 201) as any;
    const edit = await owner.browser.get(`/watches/${watch.id}/edit?mode=live`);
    const saved = await owner.browser.post(`/watches/${watch.id}/edit`, formFields(edit.text, `/watches/${watch.id}/edit`));
    expect(saved.status).toBe(303);
    const after = expectData(await h.request("GET", `/v1/watches/${watch.id}`, { key }), 200) as any;
    expect(after.allowedIssuers).toEqual(issuers);
  });
});

describe("a member's channel edit is refused for its role first, before its input is judged", () => {
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
