/**
 * What an operator meets in the console every day (CONTRACT §23), found by using it: an address a form
 * posted to, reached again by a browser, leads to a page (not a JSON 405); the Channels tab offers an
 * owner the way to add a channel; the top navigation keeps test data shown; a tag typed in capitals is
 * found; an email test without a mail server says the mail went to the outbox; a refused edit comes
 * back at the edit form.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, loopbackTransports, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import { SITE, WebClient } from "./support/web_client.ts";
import { formFields } from "./support/form_fields.ts";

let h: Harness;
let transports: Awaited<ReturnType<typeof loopbackTransports>>;
let owner: WebUser;
const page = { accept: "text/html,application/xhtml+xml" };

beforeAll(async () => {
  transports = await loopbackTransports();
  h = await createHarness({ passwords: quickPasswords, transports, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
});
afterAll(async () => {
  await h?.close();
  await transports?.close();
});

test("a browser at an address a form posts to is sent to the page above it; an API client still gets 405", async () => {
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { tags: ["mail"] });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Ops", config: { email: "ops@acme.test" } } }), 201);
  const seen = [];
  for (const path of ["/dashboard/certificates", `/certificates/${record.id}/edit`, `/channels/${channel.id}/test`]) {
    const answer = await owner.browser.get(path, page);
    seen.push([path, answer.status, answer.headers.get("location")]);
  }
  expect(seen).toEqual([
    ["/dashboard/certificates", 303, "/"],
    [`/certificates/${record.id}/edit`, 303, `/certificates/${record.id}`],
    [`/channels/${channel.id}/test`, 303, "/channels"],
  ]);
  const api = await owner.browser.get("/dashboard/certificates", { accept: "application/json" });
  expect(api.status).toBe(405);
});

test("the Channels tab with no channel tells an owner to add one there, not to ask an owner", async () => {
  const answer = await owner.browser.get("/channels?mode=test", page);
  expect(answer.text).toContain('<a href="/channels?mode=test#add-channel">Add a channel</a>');
  expect(answer.text).not.toContain("Ask an owner or admin");
});

test("with test data shown, the top navigation's Dashboard, Channels and Watches keep showing test data", async () => {
  const answer = await owner.browser.get("/channels?mode=test", page);
  const nav = answer.text.slice(answer.text.indexOf('<nav aria-label="Main">'), answer.text.indexOf("</nav>", answer.text.indexOf('<nav aria-label="Main">')));
  expect(nav).toContain('href="/?mode=test"');
  expect(nav).toContain('href="/channels?mode=test"');
  expect(nav).toContain('href="/watches?mode=test"');
  const live = await owner.browser.get("/channels", page);
  expect(live.text).toContain('<a href="/channels" aria-current="page">Channels</a>');
});

test("a tag typed in capitals in the dashboard's filter finds the certificates carrying it", async () => {
  const answer = await owner.browser.get("/?tag=MAIL", page);
  expect(answer.status).toBe(200);
  expect(answer.text).toContain('data-label="Certificate"');
});

test("an email test without CERTKEEPER_SMTP_URL says the mail went to the outbox folder, not that it reached anyone", async () => {
  const channels = (await h.request("GET", "/v1/channels")).body.data as Array<{ id: string; name: string }>;
  const ops = channels.find((c) => c.name === "Ops")!;
  await owner.browser.get("/channels", page);
  const sent = await owner.browser.post(`/channels/${ops.id}/test`, { mode: "live" });
  expect(sent.status).toBe(200);
  expect(sent.text).toContain("The test email to “Ops” was written to the server&#39;s outbox folder (./data/outbox), not sent: set CERTKEEPER_SMTP_URL");
  expect(sent.text).not.toContain("reached");
});

test("a refused edit is shown where it was typed: the field in error is focused (autofocus), at the form", async () => {
  const list = (await h.request("GET", "/v1/certificates")).body.data as Array<{ id: string }>;
  const answer = await owner.browser.get(`/certificates/${list[0]!.id}`, page);
  expect(answer.text).toContain(`action="/certificates/${list[0]!.id}/edit" id="edit"`);
  const refused = await owner.browser.post(`/certificates/${list[0]!.id}/edit`, { ...formFields(answer.text, `/certificates/${list[0]!.id}/edit`), alertThresholds: "soon" });
  expect(refused.status).toBe(400);
  const field = /<input [^>]*id="edit-thresholds"[^>]*>/.exec(refused.text)![0];
  expect(field).toContain('aria-invalid="true" autofocus');
  expect(field).toContain('aria-describedby="form-error edit-thresholds-hint"');
  expect(refused.text).toContain('<div class="error" role="alert" id="form-error" tabindex="-1">');
});

test("two edit forms open on one certificate: saving the older one changes only what it changed, not back what the other saved", async () => {
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { name: "Old", tags: [], alertThresholds: [30, 14, 7, 3, 1] });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  /** The edit form's fields as the page shows them (a browser posts them all). */
  const formOf = (text: string): Record<string, string> => {
    const form = text.slice(text.indexOf('id="edit"'), text.indexOf("</form>", text.indexOf('id="edit"')));
    const fields: Record<string, string> = {};
    for (const [, name, value] of form.matchAll(/<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"/g)) fields[name!] = value!.replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
    fields.mute = "";
    return fields;
  };
  const tabA = formOf((await owner.browser.get(`/certificates/${record.id}?mode=live`, page)).text);
  const tabB = formOf((await owner.browser.get(`/certificates/${record.id}?mode=live`, page)).text);
  expect((await owner.browser.post(`/certificates/${record.id}/edit`, { ...tabB, tags: "urgent", alertThresholds: "10" })).status).toBe(303);
  expect((await owner.browser.post(`/certificates/${record.id}/edit`, { ...tabA, name: "Renamed" })).status).toBe(303);
  const saved = expectData(await h.request("GET", `/v1/certificates/${record.id}`), 200);
  expect({ name: saved.name, tags: saved.tags, alertThresholds: saved.alertThresholds }).toEqual({ name: "Renamed", tags: ["urgent"], alertThresholds: [10] });
  // Saved unchanged: said so, nothing written.
  const same = await owner.browser.post(`/certificates/${record.id}/edit`, formOf((await owner.browser.get(`/certificates/${record.id}?mode=live`, page)).text));
  expect(same.headers.get("location")).toContain("notice=certificate-unchanged");
});

test("a form sent after the session ended is sent to sign in, told nothing was saved, and brought back to the page it was on", async () => {
  const stranger = new WebClient(h.app);
  const sent = await stranger.post("/dashboard/certificates", { domain: "kept.example.com", mode: "test" }, { csrf: "ft_stale", referer: `${SITE}/channels?mode=test` });
  expect([sent.status, sent.headers.get("location")]).toEqual([303, "/sign-in?notice=session-ended&next=%2Fchannels%3Fmode%3Dtest"]);
  const signIn = await stranger.follow(sent);
  expect(signIn.text).toContain("Your session had ended, so what you sent was not saved: sign in, then do it again.");
  expect(signIn.text).toContain('name="next" value="/channels?mode=test"');
  // Without a page of this site to go back to: the sign-in page, with the notice.
  const bare = await stranger.post("/dashboard/certificates", { domain: "kept.example.com" }, { csrf: "ft_stale" });
  expect(bare.headers.get("location")).toBe("/sign-in?notice=session-ended");
});

test("a create form sent again (the page showing the new secret reloaded) creates nothing more, and says it was done", async () => {
  const onceOf = (text: string) => /name="once" value="([^"]+)"/.exec(text)?.[1];
  // An API key.
  const keys = await owner.browser.get("/settings/api-keys", page);
  const keyForm = { name: "ci-key", mode: "live", once: onceOf(keys.text)! };
  const first = await owner.browser.post("/settings/api-keys", keyForm);
  expect(first.text).toMatch(/ck_live_[0-9A-Za-z]{30,}/);
  const again = await owner.browser.post("/settings/api-keys", keyForm);
  expect(again.text).toContain("This form was sent already: the key was created then");
  expect(again.text).not.toMatch(/ck_live_[0-9A-Za-z]{30,}/);
  const named = (await h.core.services.admin.listApiKeys(h.org.id)).filter((key) => key.name === "ci-key");
  expect(named).toHaveLength(1);
  // A webhook channel (its signing secret shown once).
  const form = await owner.browser.get("/channels/new?type=webhook&mode=live", page);
  const channelForm = { mode: "live", type: "webhook", name: "Reload hook", "config.url": "https://hooks.example.com/x", once: onceOf(form.text)! };
  expect((await owner.browser.post("/channels", channelForm)).status).toBe(200);
  const replay = await owner.browser.post("/channels", channelForm);
  expect(replay.text).toContain("This form was sent already: the channel was added then");
  const hooks = ((await h.request("GET", "/v1/channels?limit=100")).body.data as Array<{ name: string }>).filter((c) => c.name === "Reload hook");
  expect(hooks).toHaveLength(1);
  // A form refused (a name missing) may be sent again once corrected: its id was given back.
  const refusedForm = { ...channelForm, name: "", once: onceOf((await owner.browser.get("/channels/new?type=webhook&mode=live", page)).text)! };
  expect((await owner.browser.post("/channels", refusedForm)).status).toBe(400);
  expect((await owner.browser.post("/channels", { ...refusedForm, name: "Second hook" })).status).toBe(200);
});

test("adding a name already monitored says so in the console's words and lists that certificate below", async () => {
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "twice.example.com", port: 443 });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  await owner.browser.get("/", page);
  const answer = await owner.browser.post("/dashboard/certificates", { domain: "twice.example.com", port: "443", mode: "live" });
  expect(answer.status).toBe(409);
  expect(answer.text).toContain("“twice.example.com” is already monitored with these settings: it is listed below.");
  expect(answer.text).not.toContain("GET /v1/certificates");
  expect(answer.text).toContain(`/certificates/${record.id}?mode=live`);
});
