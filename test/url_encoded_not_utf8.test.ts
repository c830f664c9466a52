/**
 * A %-escape that stands for bytes that are not UTF-8 (`%FF`, a sequence cut short): in a query string
 * the API answers 400 invalid_request; in a settings-area form, 400 and nothing stored. Either would
 * otherwise be read with U+FFFD in their place: a name stored that no one typed, a filter that looks
 * for something else than was sent. Escapes that decode, U+FFFD itself included, are read as sent.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { SITE } from "./support/web_client.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords });
  owner = await signedInUser(h, "owner");
});
afterAll(() => h.close());

test("a query string whose escapes are not UTF-8: 400 invalid_request, saying so", async () => {
  for (const query of ["tag=%FF", "domain=caf%C3", "%E2%82=x", "tag=ok&domain=%C3%28"]) {
    const answer = await h.request("GET", `/v1/certificates?${query}`);
    expectError(answer, 400, "invalid_request");
    expect(answer.body.error.message).toContain("UTF-8");
  }
});

test("escapes that decode are read as sent: é, an emoji, U+FFFD itself, and a % that escapes nothing", async () => {
  for (const domain of ["caf%C3%A9.example", "%F0%9F%9A%80.example", "%EF%BF%BD", "100%"]) {
    expect(expectData(await h.request("GET", `/v1/certificates?domain=${domain}`), 200)).toEqual([]);
  }
  // A tag must be of a-z 0-9 - _ . : /: the refusal quotes the value as it was read.
  for (const [sent, read] of [["%F0%9F%9A%80", "🚀"], ["%EF%BF%BD", "\uFFFD"], ["100%", "100%"]]) {
    const answer = await h.request("GET", `/v1/certificates?tag=${sent}`);
    expectError(answer, 400, "invalid_request");
    expect(answer.body.error.message).toContain(`got "${read}"`);
  }
});

test("a settings-area form whose escapes are not UTF-8: 400, and no key made", async () => {
  await owner.browser.get("/settings/api-keys");
  const token = encodeURIComponent(owner.browser.formToken!);
  const cookie = [...owner.browser.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  const post = (body: string) =>
    h.app.handle(new Request(`${SITE}/settings/api-keys`, { method: "POST", body, headers: { "content-type": "application/x-www-form-urlencoded", origin: SITE, cookie } }));
  const names = async () => (await h.store.apiKeys.list(h.org.id)).map((key) => key.name);
  const before = await names();
  const refused = await post(`_csrf=${token}&name=Deploy%FF%FEkey&mode=live`);
  expect(refused.status).toBe(400);
  expect(await refused.text()).toContain("UTF-8");
  expect(await names()).toEqual(before);
  // The same form, its name well-formed: made, and named as typed.
  const made = await post(`_csrf=${token}&name=D%C3%A9ploiement&mode=live`);
  expect(made.status).toBe(200);
  expect(await names()).toContain("Déploiement");
});
