/**
 * The console's edit forms (CONTRACT §23 "Settings area as a console") show the current values, and
 * sending one back unchanged changes nothing: here a watch whose allowed issuers include a name with a
 * comma, which the form holds one per line (an issuer is one line: the API refuses a line break). The
 * form is read off the page as a browser would submit it.
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
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000, channels: 100, watches: 100 } });
  owner = await signedInUser(h, "owner");
  key = (await h.makeKey("owner", "live")).key;
});
afterAll(async () => {
  await h?.close();
});


describe("a watch's edit form", () => {
  test("an allowed issuer whose name holds a comma (GoDaddy.com, Inc.) survives saving the edit form unchanged", async () => {
    const watch = expectData(
      await h.request("POST", "/v1/watches", { key, body: { domain: "issuers.roundtrip.example", includeSubdomains: true, allowedIssuers: ["GoDaddy.com, Inc.", "Let's Encrypt"] } }),
      201,
    ) as any;
    const edit = await owner.browser.get(`/watches/${watch.id}/edit?mode=live`);
    expect(edit.status).toBe(200);
    const fields = formFields(edit.text, `/watches/${watch.id}/edit`);
    const saved = await owner.browser.post(`/watches/${watch.id}/edit`, fields);
    expect(saved.status).toBe(303);
    const after = expectData(await h.request("GET", `/v1/watches/${watch.id}`, { key }), 200) as any;
    expect(after.allowedIssuers).toEqual(["GoDaddy.com, Inc.", "Let's Encrypt"]);
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
