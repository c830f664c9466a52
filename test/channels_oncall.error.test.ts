/** On-call channels and channel filters refused (CONTRACT §6, §16): each a clear 400 and nothing stored. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, expectData, expectError, type Harness } from "./support/harness.ts";
import { ROUTING_KEY } from "./support/fleet_world.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

const add = (body: unknown) => h.request("POST", "/v1/channels", { body });
const TOKEN = "123456789:AAEbot-t0ken_secret-part-0123456789";

describe("POST /v1/channels refuses", () => {
  test.each([
    ["a routing key of 31 characters", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY.slice(1) } }, "invalid_config"],
    ["a routing key with a space", { type: "pagerduty", name: "P", config: { routingKey: `${ROUTING_KEY.slice(1, -1)} x` } }, "invalid_config"],
    ["a missing routing key", { type: "pagerduty", name: "P", config: {} }, "invalid_config"],
    ["a pagerduty config with a url", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY, url: "https://x.example" } }, "invalid_config"],
    ["a teams URL missing", { type: "teams", name: "T", config: {} }, "invalid_config"],
    ["a teams URL over http", { type: "teams", name: "T", config: { webhookUrl: "http://example.com/workflows/1" } }, "invalid_webhook_url"],
    ["a teams URL with user info", { type: "teams", name: "T", config: { webhookUrl: "https://u:p@example.com/x" } }, "invalid_webhook_url"],
    ["a bot token without its id", { type: "telegram", name: "G", config: { botToken: "AAEbot-t0ken_secret-part-0123456789", chatId: 1 } }, "invalid_config"],
    ["a chat id that is neither a number nor @name", { type: "telegram", name: "G", config: { botToken: TOKEN, chatId: "general chat" } }, "invalid_config"],
    ["a fractional chat id", { type: "telegram", name: "G", config: { botToken: TOKEN, chatId: 1.5 } }, "invalid_config"],
    ["a telegram config without a chat", { type: "telegram", name: "G", config: { botToken: TOKEN } }, "invalid_config"],
    ["a filter naming an unknown event kind", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { events: ["certificate.exploded"] } }, "invalid_request"],
    ["a filter with a bad tag", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { tags: ["Team A"] } }, "invalid_request"],
    ["a filter with an unknown field", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { teams: ["a"] } }, "invalid_request"],
    ["a filter that is a string", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: "everything" }, "invalid_request"],
    ["a filter with an empty list of events", { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { events: [] } }, "invalid_request"],
  ])("%s", async (_, body, code) => {
    const before = expectData(await h.request("GET", "/v1/channels?limit=100"), 200).length;
    expectError(await add(body), 400, code);
    expect(expectData(await h.request("GET", "/v1/channels?limit=100"), 200).length).toBe(before);
  });

  test("the message of an unknown event kind names the field and the kinds there are", async () => {
    const response = await add({ type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { events: ["certificate.exploded"] } });
    expect(response.body.error.message).toContain('"filter.events[0]"');
    expect(response.body.error.message).toContain("certificate.chain_expiring");
  });

  test("a bad tag in a filter: the message says what a tag may hold", async () => {
    const response = await add({ type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { tags: ["Team A"] } });
    expect(response.body.error.message).toContain('"filter.tags[0]"');
    expect(response.body.error.message).toContain("a-z 0-9");
  });
});

describe("PATCH /v1/channels/{id} refuses", () => {
  test("an unknown event kind in a new filter, leaving the channel as it was", async () => {
    const channel = expectData(await add({ type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY }, filter: { events: ["certificate.expired"] } }), 201);
    expectError(await h.request("PATCH", `/v1/channels/${channel.id}`, { body: { filter: { events: ["certificate.gone"] } } }), 400, "invalid_request");
    expect(expectData(await h.request("GET", `/v1/channels/${channel.id}`), 200).filter).toEqual({ events: ["certificate.expired"] });
  });

  test("a masked token on a channel of another type is not a value", async () => {
    const channel = expectData(await add({ type: "email", name: "M", config: { email: "a@b.co" } }), 201);
    expectError(await h.request("PATCH", `/v1/channels/${channel.id}`, { body: { config: { email: "********" } } }), 400, "invalid_config");
  });
});
