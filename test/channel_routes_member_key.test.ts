/**
 * CONTRACT §3 for the channel routes a member key may and may not use: it reads every channel and the
 * events list; it may neither send a test to a channel nor delete one (403 permission_denied, nothing
 * sent, nothing removed).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, expectError, loopbackTransports, type Harness } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";

let h: Harness;
let receiver: HttpReceiver;
let transports: ReturnType<typeof createTransports>;

beforeAll(async () => {
  transports = await loopbackTransports();
  h = await createHarness({ transports, config: { deliveryTimeoutMs: 1000 } });
  receiver = await startHttpReceiver();
});
afterAll(async () => {
  await h.close();
  await receiver.close();
  await transports.close();
});

describe("member keys on channels and events", () => {
  test("a member key may get one channel and list events", async () => {
    const created = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Read me", config: { email: "ops@acme.test" } } }), 201);
    const got = expectData(await h.request("GET", `/v1/channels/${created.id}`, { key: h.keys.member.key }), 200);
    expect(got.id).toBe(created.id);
    expect(Array.isArray(expectData(await h.request("GET", "/v1/events", { key: h.keys.member.key }), 200))).toBe(true);
  });

  test("a member key may not send a test to a channel: 403, nothing sent, no event", async () => {
    const created = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook` } } }), 201);
    receiver.answer = () => ({ status: 204 });
    const before = receiver.requests.length;
    const eventsBefore = expectData(await h.request("GET", "/v1/events?limit=100"), 200).length;
    expectError(await h.request("POST", `/v1/channels/${created.id}/test`, { key: h.keys.member.key }), 403, "permission_denied");
    expect(receiver.requests.length).toBe(before);
    expect(expectData(await h.request("GET", "/v1/events?limit=100"), 200).length).toBe(eventsBefore);
    // An admin key may.
    expect(expectData(await h.request("POST", `/v1/channels/${created.id}/test`, { key: h.keys.admin.key }), 200).status).toBe("delivered");
  });

  test("a member key may not delete a channel: 403, and the channel is still there", async () => {
    const created = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Keep me", config: { email: "keep@acme.test" } } }), 201);
    expectError(await h.request("DELETE", `/v1/channels/${created.id}`, { key: h.keys.member.key }), 403, "permission_denied");
    expect(expectData(await h.request("GET", `/v1/channels/${created.id}`), 200).id).toBe(created.id);
  });
});
