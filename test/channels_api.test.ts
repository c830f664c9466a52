/** The channels API: SPEC.md §4.1 and CONTRACT §6, every type, every error in its order, masking, tests. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { channelSecrets } from "../core/channels/channel_config.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, expectError, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { describeAuthCases } from "./support/auth_cases.ts";
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

const add = (body: unknown, key?: string) => h.request("POST", "/v1/channels", { body, key });
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describeAuthCases("POST /v1/channels", () => h, (harness, headers) =>
  harness.request("POST", "/v1/channels", { key: null, headers, body: { type: "email", name: "auth", config: { email: "a@b.co" } } }),
);

describe("POST /v1/channels", () => {
  test("an email channel: 201, enabled, the config as given", async () => {
    const data = expectData(await add({ type: "email", name: "Ops", config: { email: "ops@example.com" } }), 201);
    expect(data).toEqual({
      id: expect.stringMatching(/^ch_[0-9A-Za-z]{16,}$/),
      type: "email",
      name: "Ops",
      enabled: true,
      config: { email: "ops@example.com" },
      filter: null,
      createdAt: expect.stringMatching(iso),
      updatedAt: data.createdAt,
      // CONTRACT §23: nothing sent yet.
      health: { lastDeliveryAt: null, lastStatus: null, lastError: null, failingSince: null },
    });
  });

  test("SPEC.md's chat service: \"the service\" is stored as discord; the webhook URL is masked after creation", async () => {
    const url = "https://discord.com/api/webhooks/123456/sup3r-s3cret-token?thread_id=9";
    const created = expectData(await add({ type: "the service", name: "Chat", config: { webhookUrl: url } }), 201);
    expect([created.type, created.config]).toEqual(["discord", { webhookUrl: "https://discord.com/api/webhooks/123456/********?********" }]);
    const shown = expectData(await h.request("GET", `/v1/channels/${created.id}`), 200);
    expect(shown.config).toEqual({ webhookUrl: "https://discord.com/api/webhooks/123456/********?********" });
    expect(JSON.stringify(shown)).not.toContain("sup3r");
  });

  test("a slack channel", async () => {
    const data = expectData(await add({ type: "slack", name: "Slack", config: { webhookUrl: "https://hooks.slack.com/services/T0/B0/xyz" } }), 201);
    expect([data.type, data.config]).toEqual(["slack", { webhookUrl: "https://hooks.slack.com/services/T0/B0/********" }]);
  });

  test("a webhook channel: its signing secret is shown once, header values are masked, names keep their case", async () => {
    const created = expectData(
      await add({ type: "webhook", name: "Hook", config: { url: receiver.url, headers: { "X-Api-Key": "k3y-n0t-listed", Authorization: "Bearer t0k-n0t-listed" } } }),
      201,
    );
    expect(created.config).toEqual({
      url: receiver.url,
      headers: { "X-Api-Key": "********", Authorization: "********" },
      signingSecret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/),
    });
    const shown = expectData(await h.request("GET", `/v1/channels/${created.id}`), 200);
    expect(shown.config).toEqual({ url: receiver.url, headers: { "X-Api-Key": "********", Authorization: "********" } });
    const listed = expectData(await h.request("GET", "/v1/channels"), 200);
    // Values with a "-", which no id holds: a random id can never look like one.
    expect(JSON.stringify(listed)).not.toMatch(/k3y-n0t-listed|t0k-n0t-listed|whsec_/);
  });

  test.each([
    ["type missing", { name: "x", config: {} }, 400, "invalid_channel_type"],
    ["type sms", { type: "sms", name: "x", config: {} }, 400, "invalid_channel_type"],
    ["type names are case-sensitive", { type: "Email", name: "x", config: { email: "a@b.co" } }, 400, "invalid_channel_type"],
    ["a bad type is reported before a bad config", { type: "pager", name: "x", config: { nonsense: 1 } }, 400, "invalid_channel_type"],
    ["email missing", { type: "email", name: "x", config: {} }, 400, "invalid_config"],
    ["email not an address", { type: "email", name: "x", config: { email: "not-an-address" } }, 400, "invalid_config"],
    ["config missing", { type: "email", name: "x" }, 400, "invalid_config"],
    ["config not an object", { type: "webhook", name: "x", config: "https://a.com" }, 400, "invalid_config"],
    ["an unknown config field", { type: "email", name: "x", config: { email: "a@b.co", cc: "c@d.co" } }, 400, "invalid_config"],
    ["a chat URL missing", { type: "discord", name: "x", config: {} }, 400, "invalid_config"],
    ["a chat URL over http", { type: "discord", name: "x", config: { webhookUrl: "http://discord.com/api/webhooks/1/a" } }, 400, "invalid_webhook_url"],
    ["a chat URL that is no URL", { type: "slack", name: "x", config: { webhookUrl: "hooks.slack.com/x" } }, 400, "invalid_webhook_url"],
    ["a chat URL with user info", { type: "slack", name: "x", config: { webhookUrl: "https://u:p@hooks.slack.com/x" } }, 400, "invalid_webhook_url"],
    ["a webhook URL missing", { type: "webhook", name: "x", config: { headers: {} } }, 400, "invalid_config"],
    ["a webhook URL of another scheme", { type: "webhook", name: "x", config: { url: "ftp://example.com/x" } }, 400, "invalid_webhook_url"],
    ["a webhook URL that is a number", { type: "webhook", name: "x", config: { url: 42 } }, 400, "invalid_webhook_url"],
    ["a Host header", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { Host: "b.com" } } }, 400, "invalid_config"],
    ["a Content-Length header", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "content-length": "1" } } }, 400, "invalid_config"],
    ["a Transfer-Encoding header", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "Transfer-Encoding": "chunked" } } }, 400, "invalid_config"],
    ["a Connection header", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { Connection: "close" } } }, 400, "invalid_config"],
    ["a webhook-* header", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "Webhook-Signature": "v1,x" } } }, 400, "invalid_config"],
    ["a header value with CR/LF", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "X-A": "a\r\nX-B: b" } } }, 400, "invalid_config"],
    ["a header name with a space", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "X A": "a" } } }, 400, "invalid_config"],
    ["a header value that is not a string", { type: "webhook", name: "x", config: { url: "https://a.com", headers: { "X-A": 1 } } }, 400, "invalid_config"],
    ["headers that are not an object", { type: "webhook", name: "x", config: { url: "https://a.com", headers: ["X-A"] } }, 400, "invalid_config"],
    ["a name missing", { type: "email", config: { email: "a@b.co" } }, 400, "invalid_request"],
    ["an empty name", { type: "email", name: "", config: { email: "a@b.co" } }, 400, "invalid_request"],
    ["an unknown field", { type: "email", name: "x", config: { email: "a@b.co" }, enabled: false }, 400, "invalid_request"],
  ])("%s: %i %s", async (_case, body, status, code) => {
    expectError(await add(body), status, code);
  });

  test("a URL pointing at a private address is refused when private targets are not allowed", async () => {
    const own = await createHarness({ config: { allowPrivateTargets: false, resolve: [{ pattern: `hooks.${TEST_DOMAIN}`, address: "10.1.2.3" }] } });
    for (const url of ["http://127.0.0.1:8080/x", "http://[::1]/x", "http://169.254.169.254/latest", "http://localhost/x", `https://hooks.${TEST_DOMAIN}/x`]) {
      const response = await own.request("POST", "/v1/channels", { body: { type: "webhook", name: "x", config: { url } } });
      expect({ url, status: response.status, code: response.body.error?.code }).toEqual({ url, status: 400, code: "invalid_webhook_url" });
    }
    await own.close();
  });

  test("the plan's channel limit: 402 channel_limit_reached, per organization and mode", async () => {
    const own = await createHarness({ limits: { channels: 1 } });
    const body = { type: "email", name: "x", config: { email: "a@b.co" } };
    expectData(await own.request("POST", "/v1/channels", { body }), 201);
    expectError(await own.request("POST", "/v1/channels", { body }), 402, "channel_limit_reached");
    expectData(await own.request("POST", "/v1/channels", { body, key: own.keys.test.key }), 201);
    await own.close();
  });

  test("a member key may list but not add: 403 permission_denied", async () => {
    expectError(await add({ type: "email", name: "x", config: { email: "a@b.co" } }, h.keys.member.key), 403, "permission_denied");
    expectData(await h.request("GET", "/v1/channels", { key: h.keys.member.key }), 200);
  });
});

describe("GET, PATCH, DELETE /v1/channels", () => {
  let l: Harness;
  beforeAll(async () => {
    l = await createHarness();
  });
  afterAll(() => l.close());

  test("lists newest first with cursor pagination", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(expectData(await l.request("POST", "/v1/channels", { body: { type: "email", name: `c${i}`, config: { email: `c${i}@a.co` } } }), 201).id);
      await Bun.sleep(2);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const response = await l.request("GET", `/v1/channels?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...expectData(response, 200).map((c: any) => c.id));
      cursor = response.body.meta.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());
  });

  test("PATCH renames, disables and replaces the config; masked values sent back to the same host keep the stored secrets", async () => {
    const created = expectData(
      await l.request("POST", "/v1/channels", {
        body: { type: "webhook", name: "Hook", config: { url: "https://a.example/x", headers: { Authorization: "Bearer keep-me", "X-Old": "1" } } },
      }),
      201,
    );
    const patched = expectData(
      await l.request("PATCH", `/v1/channels/${created.id}`, {
        body: { name: "Renamed", enabled: false, config: { url: "https://a.example/y", headers: { Authorization: "********", "X-New": "2" } } },
      }),
      200,
    );
    expect(patched).toMatchObject({ name: "Renamed", enabled: false, config: { url: "https://a.example/y", headers: { Authorization: "********", "X-New": "********" } } });
    const stored = await l.store.channels.get({ organizationId: l.org.id, mode: "live" }, created.id);
    expect(stored!.config).toEqual({ url: "https://a.example/y", headers: { Authorization: "Bearer keep-me", "X-New": "2" } });
    expect(stored!.signingSecret).toBe(created.config.signingSecret);
  });

  test("a masked header value is not carried to another host: it must be sent again", async () => {
    const created = expectData(
      await l.request("POST", "/v1/channels", { body: { type: "webhook", name: "Owned", config: { url: "https://a.example/x", headers: { Authorization: "Bearer owner-only" } } } }),
      201,
    );
    const moved = await l.request("PATCH", `/v1/channels/${created.id}`, {
      key: l.keys.admin.key,
      body: { config: { url: "https://attacker.example/collect", headers: { Authorization: "********" } } },
    });
    expectError(moved, 400, "invalid_config");
    expect(moved.body.error.message).toContain("send its value again");
    const stored = await l.store.channels.get({ organizationId: l.org.id, mode: "live" }, created.id);
    expect(stored!.config).toEqual({ url: "https://a.example/x", headers: { Authorization: "Bearer owner-only" } });
  });

  test("PATCH validates the config against the channel's type", async () => {
    const created = expectData(await l.request("POST", "/v1/channels", { body: { type: "slack", name: "S", config: { webhookUrl: "https://hooks.slack.com/services/a/b" } } }), 201);
    expectError(await l.request("PATCH", `/v1/channels/${created.id}`, { body: { config: { webhookUrl: "http://insecure.example/x" } } }), 400, "invalid_webhook_url");
    expectError(await l.request("PATCH", `/v1/channels/${created.id}`, { body: { config: { email: "a@b.co" } } }), 400, "invalid_config");
    expectError(await l.request("PATCH", `/v1/channels/${created.id}`, { body: { enabled: "no" } }), 400, "invalid_request");
    const kept = expectData(await l.request("PATCH", `/v1/channels/${created.id}`, { body: { config: { webhookUrl: created.config.webhookUrl } } }), 200);
    expect(kept.config).toEqual(created.config);
  });

  test("DELETE answers { id, deleted: true }; then 404 channel_not_found everywhere", async () => {
    const created = expectData(await l.request("POST", "/v1/channels", { body: { type: "email", name: "gone", config: { email: "g@a.co" } } }), 201);
    expect(expectData(await l.request("DELETE", `/v1/channels/${created.id}`), 200)).toEqual({ id: created.id, deleted: true });
    expectError(await l.request("GET", `/v1/channels/${created.id}`), 404, "channel_not_found");
    expectError(await l.request("PATCH", `/v1/channels/${created.id}`, { body: { name: "x" } }), 404, "channel_not_found");
    expectError(await l.request("DELETE", `/v1/channels/${created.id}`), 404, "channel_not_found");
    expectError(await l.request("POST", `/v1/channels/${created.id}/test`), 404, "channel_not_found");
  });

  test("another organization's channel is answered exactly as a missing one", async () => {
    const created = expectData(await l.request("POST", "/v1/channels", { body: { type: "email", name: "mine", config: { email: "m@a.co" } } }), 201);
    const other = await l.core.services.admin.createOrganization({ name: "Other" });
    const stranger = await l.makeKey("owner", "live", other.id);
    expectError(await l.request("GET", `/v1/channels/${created.id}`, { key: stranger.key }), 404, "channel_not_found");
    expectError(await l.request("DELETE", `/v1/channels/${created.id}`, { key: stranger.key }), 404, "channel_not_found");
    expectError(await l.request("GET", `/v1/channels/${created.id}`, { key: l.keys.test.key }), 404, "channel_not_found");
    expect(expectData(await l.request("GET", `/v1/channels/${created.id}`), 200).name).toBe("mine");
  });
});

describe("POST /v1/channels/{id}/test", () => {
  test("sends a test event at once: delivered with the endpoint's status, listed in GET /v1/events", async () => {
    const created = expectData(await add({ type: "webhook", name: "Tested", config: { url: `${receiver.url}/ok` } }), 201);
    receiver.answer = () => ({ status: 204 });
    const result = expectData(await h.request("POST", `/v1/channels/${created.id}/test`), 200);
    expect(result).toEqual({ eventId: expect.stringMatching(/^evt_/), channelId: created.id, status: "delivered", responseStatus: 204, error: null });
    const received = receiver.requests.at(-1)!;
    expect([received.path, received.json.type, received.json.id, received.headers["webhook-id"]]).toEqual(["/ok", "test", result.eventId, result.eventId]);
    const events = expectData(await h.request("GET", "/v1/events"), 200);
    expect(events[0]).toEqual({
      id: result.eventId,
      type: "test",
      createdAt: expect.stringMatching(iso),
      certificateId: null,
      data: expect.objectContaining({ message: expect.any(String) }),
      deliveries: [{ channelId: created.id, status: "delivered", attempts: 1, lastError: null }],
    });
  });

  test("a failing endpoint: failed with its status and a reason, not retried", async () => {
    const created = expectData(await add({ type: "webhook", name: "Broken", config: { url: `${receiver.url}/broken` } }), 201);
    receiver.answer = () => ({ status: 500, body: "secret stack trace of the receiver" });
    const before = receiver.requests.length;
    const result = expectData(await h.request("POST", `/v1/channels/${created.id}/test`), 200);
    expect(result).toMatchObject({ status: "failed", responseStatus: 500, error: "The endpoint answered HTTP 500" });
    await h.core.services.deliveries!.loop.runDue();
    expect(receiver.requests.length).toBe(before + 1);
    const event = expectData(await h.request("GET", "/v1/events?limit=1"), 200)[0];
    expect(event.deliveries).toEqual([{ channelId: created.id, status: "failed", attempts: 1, lastError: "The endpoint answered HTTP 500" }]);
    expect(JSON.stringify(event)).not.toContain("secret stack trace");
  });

  test("an unreachable endpoint: failed, responseStatus null, the reason given", async () => {
    const created = expectData(await add({ type: "webhook", name: "Nowhere", config: { url: `http://nowhere.${TEST_DOMAIN}:1/x` } }), 201);
    const result = expectData(await h.request("POST", `/v1/channels/${created.id}/test`), 200);
    expect(result).toMatchObject({ status: "failed", responseStatus: null, error: expect.stringContaining("refused") });
  });
});

describe("PATCH /v1/channels/{id} config errors", () => {
  test("a config of the wrong shape for the type is invalid_config, as on add", async () => {
    const created = expectData(await add({ type: "email", name: "shape", config: { email: "s@a.co" } }), 201);
    for (const config of [{}, { email: 5 }, { email: "nope" }, "text", null]) {
      const response = await h.request("PATCH", `/v1/channels/${created.id}`, { body: { config } });
      expect({ config, status: response.status, code: response.body.error?.code }).toEqual({ config, status: 400, code: "invalid_config" });
    }
  });
});

describe("review fixes", () => {
  test("a chat URL ending in a slash still has its token masked", async () => {
    const data = expectData(await add({ type: "slack", name: "slash", config: { webhookUrl: "https://hooks.slack.com/services/T/B/tokenSECRET/" } }), 201);
    expect(data.config).toEqual({ webhookUrl: "https://hooks.slack.com/services/T/B/********/" });
  });

  test("a chat URL whose last segment names a format (Discord's …/{token}/slack) has the token before it masked too, in errors as well", async () => {
    const token = "Zx9fQpL2mN8vRt4KwY7bHs3cJd6GaE1uVo5iXq0TeB-AyPn_Mkr";
    const data = expectData(await add({ type: "slack", name: "compat", config: { webhookUrl: `https://discord.com/api/webhooks/112233445566778899/${token}/slack` } }), 201);
    expect(data.config).toEqual({ webhookUrl: "https://discord.com/api/webhooks/112233445566778899/********/********" });
    const listed = await h.request("GET", "/v1/channels", { key: h.keys.member.key });
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(token);
    expect(channelSecrets("slack", { webhookUrl: `https://discord.com/api/webhooks/1/${token}/GitHub` })).toEqual([token]);
    expect(channelSecrets("slack", { webhookUrl: `https://hooks.slack.com/services/T0/B0/${token}` })).toEqual([token]);
  });

  test("a bad channel name is reported by its field name", async () => {
    for (const name of [undefined, "", 5, "n".repeat(101)]) {
      const response = await add({ type: "email", name, config: { email: "a@b.co" } });
      expectError(response, 400, "invalid_request");
      expect(response.body.error.message).toContain('"name"');
    }
  });

  test("names are counted in characters: 100 emoji fit, 101 do not", async () => {
    expectData(await add({ type: "email", name: "😀".repeat(100), config: { email: "a@b.co" } }), 201);
    const response = await add({ type: "email", name: "😀".repeat(101), config: { email: "a@b.co" } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).not.toContain("\uFFFD");
  });

  test("header values an HTTP client cannot send, and hop-by-hop headers, are refused at creation", async () => {
    for (const headers of [{ "X-A": "caf\u00e9\u2028" }, { "X-A": "\u0001" }, { "X-A": "snow \u2603" }, { Expect: "100-continue" }, { Upgrade: "h2c" }, { "Keep-Alive": "1" }]) {
      expectError(await add({ type: "webhook", name: "bad header", config: { url: "https://a.example/x", headers } }), 400, "invalid_config");
    }
    const odd = expectData(await add({ type: "webhook", name: "proto", config: { url: "https://a.example/x", headers: JSON.parse('{"__proto__": "x"}') } }), 201);
    expect(odd.config.headers).toEqual(JSON.parse('{"__proto__": "********"}'));
  });

  test("an unknown query parameter is refused, even __proto__", async () => {
    expectError(await h.request("GET", "/v1/channels?__proto__=1"), 400, "invalid_request");
  });

  test("an empty PATCH says which fields it may set", async () => {
    const created = expectData(await add({ type: "email", name: "empty patch", config: { email: "a@b.co" } }), 201);
    const response = await h.request("PATCH", `/v1/channels/${created.id}`, { body: {} });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toBe("The request body must set at least one field: name, enabled, config, filter.");
  });
});
