/**
 * The dashboard's problems first (CONTRACT §23): a renewal overdue or requested comes before the
 * certificates that are only expiring under either alert policy (renewal.state is the same under both,
 * §18), as the dashboard's own count and the row's label say.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";

let h: Harness;
let owner: WebUser;
const now = Date.now();

beforeAll(async () => {
  h = await createHarness({ passwords: bunPasswords, limits: { requestsPerMinute: 100_000 } });
  owner = await signedInUser(h, "owner");
  const scope = { organizationId: h.org.id, mode: "live" as const };
  const add = async (domain: string, fields: Parameters<typeof certificateRecord>[1]) => {
    const record = certificateRecord(scope, { domain, name: `Site ${domain}`, lastCheckedAt: now, nextCheckAt: now + 365 * DAY, ...fields });
    expect(await h.store.certificates.insert(record, { limit: 1000, events: [] })).toBe("created");
  };
  // Expiring (threshold 30 crossed), renewal not due: 10 of 40 days gone.
  await add("plain.expiring.example", { notBefore: now - 10 * DAY, notAfter: now + 30 * DAY - 3_600_000, alertThresholds: [30] });
  // Days policy, 80 days into a 100-day lifetime: the deadline (day 75) has passed; 20 days left, threshold 7 → valid.
  await add("stalled.days.example", { notBefore: now - 80 * DAY, notAfter: now + 20 * DAY, alertPolicy: "days", alertThresholds: [7] });
});
afterAll(async () => {
  await h?.close();
});

const rowsOf = (text: string) =>
  [...text.matchAll(/<tr data-certificate-id="(cert_\w+)" data-status="(\w+)">[\s\S]*?<div class="mono small">([^<:]+):/g)].map((m) => `${m[2]} ${m[3]}`);

describe("problems first", () => {
  test("a certificate whose renewal is overdue (days policy) comes before certificates that are only expiring", async () => {
    const page = await owner.browser.get("/?mode=live");
    expect(page.status).toBe(200);
    // The dashboard counts it as renewal overdue, and labels its row so …
    expect(/data-renewal="overdue">\s*<span class="n">1<\/span> renewal overdue/.test(page.text)).toBe(true);
    const row = /<tr data-certificate-id="cert_\w+" data-status="valid">[\s\S]*?<\/tr>/.exec(page.text)![0];
    expect(row).toContain("renewal overdue");
    // … with the deadline that passed (CONTRACT §18: "The dashboard shows the renewal state and deadline"):
    // day 75 of the 100-day lifetime.
    const deadline = new Date(now - 5 * DAY).toISOString().slice(0, 10);
    expect(row).toMatch(new RegExp(`data-renewal-deadline="[^"]+">renewal was due ${deadline} \\d\\d:\\d\\d UTC<`));
    // … so it belongs to the "renewal overdue or requested" group, before "expiring".
    expect(rowsOf(page.text)).toEqual(["valid stalled.days.example", "expiring plain.expiring.example"]);
  });
});
