/** Tags and mutes refused (CONTRACT §4, §16): each a clear 400 invalid_request, nothing stored or changed. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;
let cert: any;
beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`tags.${TEST_DOMAIN}`] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  cert = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `tags.${TEST_DOMAIN}`, port: server.port, tags: ["keep"] } }), 201);
});
afterAll(async () => {
  await server.close();
  await h.close();
});

const badTags: Array<[string, unknown, string]> = [
  ["21 tags", Array.from({ length: 21 }, (_, i) => `t${i}`), "tags"],
  ["a tag with a space", ["team a"], "tags[0]"],
  ["an upper-case tag", ["Team"], "tags[0]"],
  ["an empty tag", [""], "tags[0]"],
  ["a tag of 51 characters", ["a".repeat(51)], "tags[0]"],
  ["a repeated tag", ["a", "a"], "tags"],
  ["a tag that is a number", [7], "tags[0]"],
  ["tags that are a string", "a,b", "tags"],
];

describe("POST /v1/certificates refuses", () => {
  test.each(badTags)("%s", async (_, tags, field) => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `other.${TEST_DOMAIN}`, port: server.port, tags } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain(`"${field}"`);
    expect(expectData(await h.request("GET", "/v1/certificates"), 200).length).toBe(1);
  });
});

describe("PATCH /v1/certificates/{id} refuses", () => {
  test.each(badTags)("%s, leaving the tags as they were", async (_, tags) => {
    expectError(await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { tags } }), 400, "invalid_request");
    expect(expectData(await h.request("GET", `/v1/certificates/${cert.id}`), 200).tags).toEqual(["keep"]);
  });

  test.each([
    ["a date without a time", "2026-12-01"],
    ["a time without a zone", "2026-12-01T10:00:00"],
    ["a date that does not exist", "2026-02-30T10:00:00.000Z"],
    ["a number", 1796000000000],
    ["free text", "tomorrow"],
  ])("mutedUntil as %s", async (_, mutedUntil) => {
    const response = await h.request("PATCH", `/v1/certificates/${cert.id}`, { body: { mutedUntil } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"mutedUntil"');
    expect(expectData(await h.request("GET", `/v1/certificates/${cert.id}`), 200).mutedUntil).toBeNull();
  });
});

describe("GET /v1/certificates?tag= refuses", () => {
  test.each([["a tag with a space", "a%20b"], ["an empty tag", ""], ["an empty item", "a,,b"], ["upper case", "A"], ["21 tags", Array.from({ length: 21 }, (_, i) => `t${i}`).join(",")]])(
    "%s",
    async (_, tag) => {
      const response = await h.request("GET", `/v1/certificates?tag=${tag}`);
      expectError(response, 400, "invalid_request");
      expect(response.body.error.message).toContain('"tag"');
    },
  );
});
