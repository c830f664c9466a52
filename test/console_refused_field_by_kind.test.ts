/**
 * A refused form comes back with the field the refusal is about marked `aria-invalid`, described by the
 * message and focused (adapters/web/refused.ts). The field must be the one the refusal is about: a
 * control marked invalid and focused for another field's fault sends a keyboard or screen-reader user
 * to the wrong place, and tells them a field they typed right is wrong.
 *
 * The Members tab's refusals quote what the user typed (an email address) or a member's email, so the
 * field is told by the refusal's own words around them (an address holding "password" marked the
 * password field), and a refusal of a row's form marks nothing of the add form; the API keys tab marks
 * Name only for a refusal about the name (an unknown mode marked it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { PASSWORD, signedInUser, type WebUser } from "./support/web_users.ts";
import { WebClient } from "./support/web_client.ts";

let h: Harness;
let owner: WebUser;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
});

/** The id of every control the page marks invalid, and of the element it autofocuses. */
function marks(text: string): { invalid: string[]; autofocus: string[] } {
  const idOf = (tag: string) => /\bid="([^"]*)"/.exec(tag)?.[1] ?? tag;
  return {
    invalid: [...text.matchAll(/<(?:input|select|textarea)\b[^>]*\baria-invalid="true"[^>]*>/g)].map((m) => idOf(m[0])),
    autofocus: [...text.matchAll(/<[a-z]+\b[^>]*\bautofocus\b[^>]*>/g)].map((m) => idOf(m[0])),
  };
}

test("adding a member with an address that is not one: the Initial password field, typed right, is not marked invalid nor focused", async () => {
  const answer = await owner.browser.post("/settings/members", { email: "password@localhost", role: "member", password: "a long enough passw0rd" });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("is not an email address");
  const found = marks(answer.text);
  // The refusal is about the Email field (or, naming none, the message itself): never the password's.
  expect(found.invalid).not.toContain("member-password");
  expect(found.autofocus).not.toContain("member-password");
});

test("a role change refused for the last owner, whose address holds the word 'password': the add form's password field is not marked", async () => {
  const sole = await h.core.services.admin.createOrganization({ name: "Sole", plan: "pro", limits: { requestsPerMinute: 100_000 } });
  const email = `password.keeper-${crypto.randomUUID().slice(0, 6)}@acme.test`;
  const keeper = await h.core.services.admin.createUser({ organizationId: sole.id, email, role: "owner", password: PASSWORD });
  const browser = new WebClient(h.app);
  expect((await browser.signIn(email, PASSWORD)).status).toBe(303);
  await browser.get("/settings/members");
  // The sole owner demoting themselves: refused, the message quoting their address.
  const answer = await browser.post(`/settings/members/${keeper.id}/role`, { role: "admin" });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("last owner");
  // The refusal is about no field of the add form: the message is focused, nothing marked invalid.
  const found = marks(answer.text);
  expect(found.invalid).toEqual([]);
  expect(found.autofocus).toEqual(["form-error"]);
});

test("an API key refused for its mode: the Name field, typed right, is not marked invalid nor focused", async () => {
  const answer = await owner.browser.post("/settings/api-keys", { name: "Deploy bot", mode: "prod" });
  expect(answer.status).toBe(400);
  expect(answer.text).toContain("does not exist: choose live or test");
  const found = marks(answer.text);
  expect(found.invalid).not.toContain("key-name");
  expect(found.autofocus).not.toContain("key-name");
});
