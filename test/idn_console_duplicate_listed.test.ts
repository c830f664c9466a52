/**
 * In the console, adding `bücher.example.com` when `xn--bcher-kva.example.com` is monitored is refused
 * as already monitored, and the page says "it is listed below": the list below, filtered by the text as
 * typed, shows it (a name typed in Unicode is searched in its ASCII form).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, loopbackTransports, type Harness } from "./support/harness.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

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

test("adding the U-label of a monitored IDN says it is listed below, and lists it", async () => {
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { domain: "xn--bcher-kva.example.com", port: 443 });
  expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  await owner.browser.get("/", page);
  const answer = await owner.browser.post("/dashboard/certificates", { domain: "bücher.example.com", port: "443", mode: "live" });
  expect(answer.status).toBe(409);
  expect(answer.text).toContain("is already monitored with these settings: it is listed below.");
  // The certificate it names is on the page (a link to it), as for an ASCII name.
  expect({
    linked: answer.text.includes(`/certificates/${record.id}?mode=live`),
    saysNoneMatches: answer.text.includes("No certificate matches these filters."),
  }).toEqual({ linked: true, saysNoneMatches: false });
});
