/**
 * A request that takes no body (a channel test, a re-check, a watch poll, a removal) refuses one it
 * would otherwise ignore, as CONTRACT §4 refuses broken JSON and unknown fields everywhere else: a
 * client sending `{"force": true}` learns the API has no such thing, and nothing is done. No body, an
 * empty one, `{}` or `null` (as client libraries send) is nothing; a GET reads no body at all.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, expectData, expectError, loopbackTransports, type Harness } from "./support/harness.ts";

let h: Harness;
let transports: Awaited<ReturnType<typeof loopbackTransports>>;
let channelId: string;

beforeAll(async () => {
  transports = await loopbackTransports();
  h = await createHarness({ passwords: quickPasswords, transports, limits: { requestsPerMinute: 100_000 } });
  channelId = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Ops", config: { email: "ops@acme.test" } } }), 201).id;
});
afterAll(async () => {
  await h?.close();
  await transports?.close();
});

const json = { "content-type": "application/json" };
const testEvents = async () => expectData(await h.request("GET", "/v1/events?limit=100"), 200).filter((event: { type: string }) => event.type === "test").length;

test("a channel test with broken JSON, a field or an array is refused and sends nothing", async () => {
  const before = await testEvents();
  const broken = await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: '{"force": tru', headers: json });
  expectError(broken, 400, "invalid_request");
  expect(broken.body.error.message).toContain("not valid JSON");
  expect(broken.body.error.message).toContain("this request takes no body");
  const field = await h.request("POST", `/v1/channels/${channelId}/test`, { body: { force: true } });
  expectError(field, 400, "invalid_request");
  expect(field.body.error.message).toBe('Unknown field "force": this request takes no body (send none, or {}).');
  expectError(await h.request("POST", `/v1/channels/${channelId}/test`, { body: [1] }), 400, "invalid_request");
  const text = await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: "please", headers: { "content-type": "text/plain" } });
  expectError(text, 415, "unsupported_media_type");
  expect(await testEvents()).toBe(before);
});

test("no body, an empty one, {} and null are nothing, whatever their type: the test is sent each time", async () => {
  const before = await testEvents();
  const answers = [
    await h.request("POST", `/v1/channels/${channelId}/test`),
    await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: "", headers: json }),
    await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: " \n", headers: json }),
    await h.request("POST", `/v1/channels/${channelId}/test`, { body: {} }),
    await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: "null", headers: json }),
    // As `curl -d '{}'` sends it: a form's type.
    await h.request("POST", `/v1/channels/${channelId}/test`, { rawBody: "{}", headers: { "content-type": "application/x-www-form-urlencoded" } }),
  ];
  expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200]);
  expect(await testEvents()).toBe(before + 6);
});

test("a removal with a body it does not take removes nothing", async () => {
  const other = expectData(await h.request("POST", "/v1/channels", { body: { type: "email", name: "Kept", config: { email: "kept@acme.test" } } }), 201);
  expectError(await h.request("DELETE", `/v1/channels/${other.id}`, { body: { cascade: true } }), 400, "invalid_request");
  expectData(await h.request("GET", `/v1/channels/${other.id}`), 200);
  expectData(await h.request("DELETE", `/v1/channels/${other.id}`), 200);
});

test("the key is judged before the body: no key and a broken body is 401", async () => {
  expectError(await h.request("POST", `/v1/channels/${channelId}/test`, { key: null, rawBody: "{", headers: json }), 401, "missing_api_key");
});
