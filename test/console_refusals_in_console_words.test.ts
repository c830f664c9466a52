/**
 * A refusal shown in the console (CONTRACT §23: a clear message on the form) names a field by the
 * label the form shows it under, not by its place in the API's JSON body (`alertThresholds[1]`,
 * `config.webhookUrl`), and sends nobody to an API route (`GET /v1/channels`).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

/** The message the page shows in its alert, or its error page's paragraph. */
const alertOf = (text: string) => /role="alert"[^>]*>([^<]*)/.exec(text)?.[1] ?? /<h1>[^<]*<\/h1><p>([^<]*)<\/p>/.exec(text)?.[1];

test("a threshold that is not a number is named by the form's label and its place in the list", async () => {
  const answer = await owner.browser.post("/dashboard/certificates", { mode: "live", domain: "words.example.com", alertThresholds: "30, soon" });
  expect(answer.status).toBe(400);
  const message = alertOf(answer.text)!;
  expect(message).toContain("“Alert thresholds” (its second value) must be a whole number from 0 to 730");
  expect(message).not.toContain("alertThresholds");
  expect(message).not.toContain("Field ");
});

test("a chat webhook that is not https is named as the form's Webhook URL; a channel's own fields by their labels", async () => {
  const slack = await owner.browser.post("/channels", { mode: "live", type: "slack", name: "Ops", "config.webhookUrl": "http://hooks.slack.com/services/T0/B0/x" });
  expect(slack.status).toBe(400);
  expect(alertOf(slack.text)).toBe("“Webhook URL” must be an https URL; got &quot;http&quot;.");
  const telegram = await owner.browser.post("/channels", { mode: "live", type: "telegram", name: "TG", "config.botToken": "123456789:AAEbot-t0ken_secret-part-0123456789", "config.chatId": "not a chat" });
  expect(telegram.status).toBe(400);
  expect(alertOf(telegram.text)).toStartWith("A telegram channel needs “Chat id”, a chat id");
  const hook = await owner.browser.post("/channels", { mode: "live", type: "webhook", name: "Hook", "config.url": "https://user:pass@hooks.example.com/in" });
  expect(alertOf(hook.text)).toBe("“URL” must not carry a user name or password: use “Headers” for credentials.");
});

test("a channel or certificate that is not there says so, without an API route to list them", async () => {
  for (const path of ["/channels/ch_0000000000000000000000/edit?mode=live", "/certificates/crt_0000000000000000000000?mode=live"]) {
    const answer = await owner.browser.get(path);
    expect(answer.status).toBe(404);
    expect(answer.text).toContain("<h1>Not found</h1>");
    expect(answer.text).not.toContain("/v1/");
  }
  const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Ops", config: { email: "ops@acme.test" } } }), 201);
  expect((await owner.browser.get(`/channels/${channel.id}/edit?mode=live`)).status).toBe(200);
});
