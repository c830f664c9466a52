/**
 * A refused channel edit (CONTRACT §23: secrets shown once, then masked; a refused form gives a clear
 * message with the input kept): the form shown again holds the stored secrets masked, as the edit form
 * does, so fixing the one wrong field and saving keeps the webhook's headers, the bot token and the
 * routing key. A header line without a colon is refused on the form, not on a bare error page, and
 * named by its number: a secret typed into it never comes back in the page. A member is refused for the
 * role before the form is read.
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
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000, channels: 100 } });
  owner = await signedInUser(h, "owner");
  key = (await h.makeKey("owner", "live")).key;
});
afterAll(async () => {
  await h?.close();
});


const stored = async (id: string) => (await h.store.channels.get({ organizationId: h.org.id, mode: "live" }, id))!;

describe("a refused channel edit, then fixed", () => {
  test("webhook: a bad URL refused, then fixed on the form shown again: the headers are still there", async () => {
    const ch = expectData(
      await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "Hook", config: { url: "https://hooks.example.com/in", headers: { Authorization: "Bearer t0ken" } } } }),
      201,
    ) as any;
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    expect(fields["config.headers"]).toBe("Authorization: ********");
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...fields, "config.url": "ftp://hooks.example.com/in" });
    expect(refused.status).toBe(400);
    const again = formFields(refused.text, `/channels/${ch.id}/edit`);
    const fixed = await owner.browser.post(`/channels/${ch.id}/edit`, { ...again, "config.url": "https://hooks.example.com/in" });
    expect(fixed.status).toBe(303);
    expect((await stored(ch.id)).config).toEqual({ url: "https://hooks.example.com/in", headers: { Authorization: "Bearer t0ken" } });
  });

  test("telegram: a bad chat id refused, then fixed on the form shown again: saved, the bot token kept", async () => {
    const ch = expectData(
      await h.request("POST", "/v1/channels", { key, body: { type: "telegram", name: "TG", config: { botToken: "123456789:AAH-fixed-b0t-t0ken-xyz", chatId: -100123 } } }),
      201,
    ) as any;
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...fields, "config.chatId": "not a chat" });
    expect(refused.status).toBe(400);
    const again = formFields(refused.text, `/channels/${ch.id}/edit`);
    const fixed = await owner.browser.post(`/channels/${ch.id}/edit`, { ...again, "config.chatId": "-100456" });
    expect({ status: fixed.status, error: /role="alert">([^<]*)/.exec(fixed.text)?.[1] }).toEqual({ status: 303, error: undefined });
    expect((await stored(ch.id)).config).toEqual({ botToken: "123456789:AAH-fixed-b0t-t0ken-xyz", chatId: -100456 });
  });

  test("pagerduty: an empty name refused, then fixed on the form shown again: saved, the routing key kept", async () => {
    const routingKey = "r".repeat(16) + "0123456789abcdef";
    const ch = expectData(await h.request("POST", "/v1/channels", { key, body: { type: "pagerduty", name: "PD", config: { routingKey } } }), 201) as any;
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...fields, name: "" });
    expect(refused.status).toBe(400);
    const again = formFields(refused.text, `/channels/${ch.id}/edit`);
    expect(again["config.routingKey"]).toBe("********");
    const fixed = await owner.browser.post(`/channels/${ch.id}/edit`, { ...again, name: "PD on call" });
    expect(fixed.status).toBe(303);
    expect((await stored(ch.id)).config).toEqual({ routingKey });
  });

  test("boxes the user unticked (Enabled, an event of the filter) stay unticked on the refused form, and the fixed save keeps them so", async () => {
    const ch = expectData(
      await h.request("POST", "/v1/channels", { key, body: { type: "email", name: "Ops mail", config: { email: "ops@acme.test" }, filter: { events: ["certificate.expired", "certificate.revoked"] } } }),
      201,
    ) as any;
    expect(ch.enabled).toBe(true);
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    expect([fields.enabled, fields["filter.event.certificate.expired"], fields["filter.event.certificate.revoked"]]).toEqual(["1", "1", "1"]);
    // Enabled and "expired" unticked (a browser then sends nothing for them), the name cleared by mistake.
    const { enabled: _, "filter.event.certificate.expired": __, ...unticked } = fields;
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...unticked, name: "" });
    expect(refused.status).toBe(400);
    const again = formFields(refused.text, `/channels/${ch.id}/edit`);
    expect([again.enabled, again["filter.event.certificate.expired"], again["filter.event.certificate.revoked"]]).toEqual([undefined, undefined, "1"]);
    expect((await owner.browser.post(`/channels/${ch.id}/edit`, { ...again, name: "Ops mail" })).status).toBe(303);
    const saved = await stored(ch.id);
    expect({ enabled: saved.enabled, events: saved.filter?.events }).toEqual({ enabled: false, events: ["certificate.revoked"] });
  });

  test("a webhook header line without a colon: the form is shown again with the message, not a bare error page", async () => {
    const ch = expectData(await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "Hook2", config: { url: "https://hooks.example.com/two" } } }), 201) as any;
    const edit = await owner.browser.get(`/channels/${ch.id}/edit?mode=live`);
    const fields = formFields(edit.text, `/channels/${ch.id}/edit`);
    const refused = await owner.browser.post(`/channels/${ch.id}/edit`, { ...fields, name: "Renamed hook", "config.headers": "Authorization Bearer x" });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain("not written as Name: value");
    expect(refused.text).toContain('id="channel-form"');
    expect(refused.text).toContain('value="Renamed hook"');
  });
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
