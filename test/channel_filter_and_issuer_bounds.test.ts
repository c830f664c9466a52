/**
 * Bounds of request bodies that no other test holds at their edge (CONTRACT §4, §15, §16): each
 * refusal is a whole 400 envelope naming the field, and nothing is stored.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { ROUTING_KEY } from "./support/fleet_world.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

const channelCount = async () => expectData(await h.request("GET", "/v1/channels?limit=100"), 200).length;
const watchCount = async () => expectData(await h.request("GET", "/v1/watches?limit=100"), 200).length;
const pagerduty = (filter: unknown) => ({ type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter });
const tags = (n: number) => Array.from({ length: n }, (_, i) => `team:t${i}`);

describe("a channel filter's lists", () => {
  test.each([
    ["21 tags", { tags: tags(21) }, "filter.tags"],
    ["an empty list of tags", { tags: [] }, "filter.tags"],
    ["an event kind given twice", { events: ["certificate.expired", "certificate.expired"] }, "filter.events"],
  ])("POST refuses %s: 400 invalid_request naming the field, nothing stored", async (_, filter, field) => {
    const before = await channelCount();
    const response = await h.request("POST", "/v1/channels", { body: pagerduty(filter) });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain(`"${field}"`);
    expect(await channelCount()).toBe(before);
  });

  test("20 tags, the most a filter holds, are taken", async () => {
    const channel = expectData(await h.request("POST", "/v1/channels", { body: pagerduty({ tags: tags(20) }) }), 201);
    expect(channel.filter.tags).toHaveLength(20);
  });

  test("PATCH refuses 21 tags, an empty list of tags and a repeated kind, leaving the filter as it was", async () => {
    const channel = expectData(await h.request("POST", "/v1/channels", { body: pagerduty({ events: ["certificate.expired"] }) }), 201);
    for (const filter of [{ tags: tags(21) }, { tags: [] }, { events: ["certificate.expiring", "certificate.expiring"] }]) {
      expectError(await h.request("PATCH", `/v1/channels/${channel.id}`, { body: { filter } }), 400, "invalid_request");
    }
    expect(expectData(await h.request("GET", `/v1/channels/${channel.id}`), 200).filter).toEqual({ events: ["certificate.expired"] });
  });
});

describe("a watch's allowedIssuers hold one line each", () => {
  test.each([
    ["a line feed", "Let's\nEncrypt"],
    ["a tab", "Let's\tEncrypt"],
    ["a carriage return", "DigiCert\r"],
    ["DEL", "DigiCert\u007f"],
  ])("POST refuses an issuer with %s: 400 invalid_request naming the field, nothing stored", async (_, issuer) => {
    const before = await watchCount();
    const response = await h.request("POST", "/v1/watches", { body: { domain: "issuers.test", allowedIssuers: ["DigiCert Inc", issuer] } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain('"allowedIssuers[1]"');
    expect(await watchCount()).toBe(before);
  });

  test("PATCH refuses one too, leaving the list as it was", async () => {
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "patched-issuers.test", allowedIssuers: ["DigiCert Inc"] } }), 201);
    expectError(await h.request("PATCH", `/v1/watches/${watch.id}`, { body: { allowedIssuers: ["Let's\nEncrypt"] } }), 400, "invalid_request");
    expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).allowedIssuers).toEqual(["DigiCert Inc"]);
  });
});
