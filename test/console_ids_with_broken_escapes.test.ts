/**
 * The settings area's pages answer an id with a broken %-escape, or one decoding to U+0000, as any
 * unknown id: 404, as the JSON API does (the same operations, given the id as the URL spells it).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords });
  owner = await signedInUser(h, "owner");
});
afterAll(() => h.close());

test.each(["/certificates/%ZZ", "/certificates/%E0%A4%A", "/channels/%ZZ/edit", "/certificates/%00"])("GET %s: the page's not-found, as for an unknown id", async (path) => {
  expect((await owner.browser.get("/certificates/no-such-id")).status).toBe(404);
  expect((await owner.browser.get(path)).status).toBe(404);
});
