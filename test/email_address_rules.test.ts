/**
 * What an email address is, for an email channel's `config.email` (CONTRACT §6: else 400
 * invalid_config) and a user's email (the CLI and the settings area): `local@domain`, no space or
 * control character anywhere (NUL, U+0001, DEL, line and bidi marks), a domain of two or more labels,
 * none empty and none starting or ending with a hyphen. Ordinary addresses (plus-addressing, sub-
 * domains, internationalised domains) are taken as before.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

describe("email channels refuse what is not an email address", () => {
  test.each([
    ["a NUL in the local part", "ops\u0000@example.com"],
    ["a control character (U+0001) in the local part", "ops\u0001x@example.com"],
    ["a DEL in the domain", "ops@exam\u007fple.com"],
    ["an empty label in the domain (two dots in a row)", "ops@example..com"],
  ])("%s: 400 invalid_config on add and on patch, and no channel made", async (_, email) => {
    const added = await h.request("POST", "/v1/channels", { body: { type: "email", name: "mail", config: { email } } });
    expectError(added, 400, "invalid_config");
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "ok", config: { email: "ops@example.com" } } }), 201);
    expectError(await h.request("PATCH", `/v1/channels/${channel.id}`, { body: { config: { email } } }), 400, "invalid_config");
    expect(expectData(await h.request("GET", `/v1/channels/${channel.id}`), 200).config.email).toBe("ops@example.com");
    await h.request("DELETE", `/v1/channels/${channel.id}`);
  });
});

describe("what an email address is", () => {
  test.each([
    ["a hyphen at the start of a domain label", "ops@-example.com"],
    ["a hyphen at the end of a domain label", "ops@example-.com"],
    ["a next-line character (U+0085)", "ops@example.com\u0085"],
    ["a bidi override", "ops\u202e@example.com"],
    ["a domain of one label", "ops@localhost"],
    ["an empty local part", "@example.com"],
  ])("%s: refused for a channel", async (_, email) => {
    expectError(await h.request("POST", "/v1/channels", { body: { type: "email", name: "mail", config: { email } } }), 400, "invalid_config");
  });

  test.each([
    ["plus-addressing", "ops+certs@example.com"],
    ["a subdomain and digits", "team.ops-2@mail.eu.example.com"],
    ["an internationalised domain", "ops@bücher.example"],
  ])("%s: taken", async (_, email) => {
    const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "mail", config: { email } } }), 201);
    expect(channel.config.email).toBe(email);
    await h.request("DELETE", `/v1/channels/${channel.id}`);
  });

  test("a user's email follows the same rule", async () => {
    const admin = h.core.services.admin;
    for (const email of ["ops\u0000@example.com", "ops@example..com", "ops@exam\u007fple.com"]) {
      await expect(admin.createUser({ organizationId: h.org.id, email, role: "member" })).rejects.toThrow("is not an email address");
    }
    const user = await admin.createUser({ organizationId: h.org.id, email: "Colleague+Certs@Example.com", role: "member" });
    expect(user.email).toBe("colleague+certs@example.com");
  });
});
