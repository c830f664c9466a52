/**
 * CONTRACT §8 and §23: each of a signed-in user's workspace actions counts once against the
 * organization's requests per minute, however many operations it runs: a certificate's page (the
 * certificate and its events) and the workspace's own overview and dashboard. With a limit of 2 a
 * minute the second action of the minute passes; the third is refused.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { DAY, MINUTE } from "../core/base/mod.ts";
import { certificateRecord } from "./support/store_conformance/factories.ts";

let h: Harness;
const clock = new FakeClock(Date.UTC(2026, 5, 1, 12));
beforeAll(async () => {
  h = await createHarness({ clock, limits: { requestsPerMinute: 2 } });
});
afterAll(() => h.close());

const acting = async () => {
  const user = (await h.store.users.get(h.keys.member.userId))!;
  const organization = (await h.store.organizations.get(h.org.id))!;
  return h.core.accounts.workspace.as({ user, organization }, "live");
};

async function twiceThenRefused(action: () => Promise<unknown>) {
  clock.advance(2 * MINUTE);
  await action();
  await action();
  await expect(action()).rejects.toMatchObject({ code: "rate_limit_exceeded" });
}

test("a certificate's page (the certificate and its events) is one request against the limit", async () => {
  const now = clock.now();
  const record = certificateRecord({ organizationId: h.org.id, mode: "live" }, { lastCheckedAt: now, nextCheckAt: now + 365 * DAY, notBefore: now - 10 * DAY, notAfter: now + 80 * DAY });
  expect(await h.store.certificates.insert(record, { limit: 100, events: [] })).toBe("created");
  const workspace = await acting();
  await twiceThenRefused(() => workspace.certificate(record.id));
});

test("the workspace's overview (certificates and channels) is one request against the limit", async () => {
  const workspace = await acting();
  await twiceThenRefused(() => workspace.overview());
});

test("the workspace's dashboard (the list and the summary) is one request against the limit", async () => {
  const workspace = await acting();
  await twiceThenRefused(() => workspace.dashboard({}));
});
