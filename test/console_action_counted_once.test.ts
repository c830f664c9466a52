/**
 * CONTRACT §8 counts requests per minute for each API key and signed-in user. One console action (a
 * dashboard: the summary, each problem group of the list, the channels) runs several operations
 * through the pipeline: it is one request of the user's, counted once, not once per operation (with
 * a limit of 2 a minute the dashboard would otherwise be refused by its own reads).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ limits: { requestsPerMinute: 2 } });
});
afterAll(() => h.close());

test("a dashboard of several operations is one request against the limit", async () => {
  const user = (await h.store.users.get(h.keys.member.userId))!;
  const organization = (await h.store.organizations.get(h.org.id))!;
  const dashboard = () => h.core.accounts.console.as({ user, organization }, "live").dashboard({});
  const first = await dashboard();
  expect(first.certificates).toEqual([]);
  // The second action of the minute is still within the limit of 2.
  await dashboard();
  // The third is over it.
  await expect(dashboard()).rejects.toMatchObject({ code: "rate_limit_exceeded" });
});
