/**
 * The CLI refuses `--rate-limit 0` at the CLI because "it was stored, and every request of the
 * organization answered 429". The rule lives in the CLI's flag parser only: the core that every face
 * calls (Admin: the CLI, and the embed API's `organization: { name, limits }`) still stores a limit of 0
 * requests a minute. A rule of the product is core's (STYLE.md §1, §10), so every face refuses it.
 */
import { expect, test } from "bun:test";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";

test("Admin refuses an organization created with 0 requests a minute, as the CLI does", async () => {
  const admin = new Admin(createMemoryStore(), systemClock);
  const created = admin.createOrganization({ name: "Locked out", plan: "pro", limits: { requestsPerMinute: 0 } });
  await expect(created).rejects.toMatchObject({ code: "invalid_request" });
});

test("Admin refuses an organization updated to 0 requests a minute, as the CLI does", async () => {
  const admin = new Admin(createMemoryStore(), systemClock);
  const org = await admin.createOrganization({ name: "Acme", plan: "pro" });
  await expect(admin.updateOrganization(org.id, { limits: { requestsPerMinute: 0 } })).rejects.toMatchObject({ code: "invalid_request" });
  // A limit of 0 certificates stays a setting (an organization that may only read).
  expect((await admin.updateOrganization(org.id, { limits: { certificates: 0 } })).limits.certificates).toBe(0);
});
