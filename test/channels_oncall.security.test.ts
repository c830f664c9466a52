/**
 * On-call channels and hostile or failing endpoints: the private-address rule (a Teams URL is the
 * caller's, PagerDuty's and Telegram's base URLs the operator's), credentials kept out of answers and
 * errors, 410 and Retry-After, and certificate text that cannot become markup.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { expectData, expectError, TEST_DOMAIN } from "./support/harness.ts";
import { BOT_TOKEN, fleetWorld, ROUTING_KEY, type FleetWorld } from "./support/fleet_world.ts";
import { refusedPort } from "./support/servers.ts";
import { teamsPayload } from "../core/notify/teams_payload.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { telegramPayload } from "../core/notify/telegram_payload.ts";
import { pagerdutyRequests } from "../core/notify/pagerduty_payload.ts";
import type { EventRecord } from "../core/base/records.ts";

let w: FleetWorld;
afterEach(async () => {
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

describe("the private-address rule", () => {
  test("a Teams URL at a loopback address or a name resolving to one is refused; PagerDuty and Telegram on 127.0.0.1 are delivered", async () => {
    w = await fleetWorld({ config: { allowPrivateTargets: false } });
    const teamsAtIp = await w.h.request("POST", "/v1/channels", { body: { type: "teams", name: "T", config: { webhookUrl: `https://127.0.0.1:${w.teams.port}/x` } } });
    expectError(teamsAtIp, 400, "invalid_webhook_url");
    const teamsByName = await w.h.request("POST", "/v1/channels", { body: { type: "teams", name: "T", config: { webhookUrl: w.teams.url + "/x" } } });
    expectError(teamsByName, 400, "invalid_webhook_url");

    const pager = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY } } }), 201);
    const tg = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "telegram", name: "G", config: { botToken: BOT_TOKEN, chatId: 42 } } }), 201);
    expect(expectData(await w.h.request("POST", `/v1/channels/${pager.id}/test`), 200).status).toBe("delivered");
    expect(expectData(await w.h.request("POST", `/v1/channels/${tg.id}/test`), 200).status).toBe("delivered");
    expect([w.pagerduty.requests.length, w.telegram.requests.length, w.teams.requests.length]).toEqual([1, 1, 0]);
  });
});

describe("credentials", () => {
  test("a Telegram endpoint that cannot be reached: the error names the host, never the token", async () => {
    const port = await refusedPort();
    w = await fleetWorld({ config: { telegramUrl: `http://127.0.0.1:${port}` } });
    const tg = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "telegram", name: "G", config: { botToken: BOT_TOKEN, chatId: 42 } } }), 201);
    const result = expectData(await w.h.request("POST", `/v1/channels/${tg.id}/test`), 200);
    expect(result.status).toBe("failed");
    expect(result.error).toContain(`127.0.0.1:${port}`);
    const everything = JSON.stringify([result, expectData(await w.h.request("GET", "/v1/events"), 200)]);
    expect(everything).not.toContain(BOT_TOKEN.split(":")[1]!);
  });

  test("PagerDuty's key is sent only in the body, Telegram's token only in the path", async () => {
    w = await fleetWorld();
    const pager = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY } } }), 201);
    await w.h.request("POST", `/v1/channels/${pager.id}/test`);
    const request = w.pagerduty.requests[0]!;
    expect(request.path).not.toContain(ROUTING_KEY);
    expect(JSON.stringify(request.headers)).not.toContain(ROUTING_KEY);
  });
});

describe("failing endpoints", () => {
  test("PagerDuty answering 410 Gone disables the channel", async () => {
    w = await fleetWorld();
    w.pagerduty.answer = () => ({ status: 410 });
    const pager = expectData(await w.h.request("POST", "/v1/channels", { body: { type: "pagerduty", name: "P", config: { routingKey: ROUTING_KEY } } }), 201);
    const result = expectData(await w.h.request("POST", `/v1/channels/${pager.id}/test`), 200);
    expect([result.status, result.responseStatus]).toEqual(["failed", 410]);
    expect(expectData(await w.h.request("GET", `/v1/channels/${pager.id}`), 200).enabled).toBe(false);
  });

  test("Telegram's 429 with Retry-After: the next attempt waits that long, then is delivered", async () => {
    w = await fleetWorld({ config: { deliveryRetryMs: [1000, 120_000] } });
    w.telegram.answer = (n) => (n === 0 ? { status: 429, headers: { "retry-after": "30" }, body: '{"ok":false,"error_code":429,"parameters":{"retry_after":30}}' } : { status: 200, body: '{"ok":true}' });
    expectData(await w.h.request("POST", "/v1/channels", { body: { type: "telegram", name: "G", config: { botToken: BOT_TOKEN, chatId: 42 } } }), 201);
    const domain = `soon.${TEST_DOMAIN}`;
    const server = await w.tlsServer(domain, new Date(w.clock.now() + 3 * 86_400_000 + 3_600_000));
    expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();
    expect(w.telegram.requests.length).toBe(1);
    w.clock.advance(29_000);
    await w.settle();
    expect(w.telegram.requests.length).toBe(1);
    w.clock.advance(2_000);
    await w.settle();
    expect(w.telegram.requests.length).toBe(2);
    const [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
    expect(event.deliveries[0]).toMatchObject({ status: "delivered", attempts: 2 });
  });
});

describe("what a certificate says cannot become markup or overflow a message", () => {
  const hostile = "[click me](https://evil.example) **now** _x_ <at>everyone</at>";
  const event: EventRecord = {
    id: "evt_a1B2c3D4e5F6g7H8",
    organizationId: "org_a1B2c3D4e5F6g7H8",
    mode: "live",
    type: "certificate.expiring",
    certificateId: "cert_3kT9vQm2Xy7LpA0bN5cZ",
    createdAt: Date.parse("2026-05-05T09:00:00.000Z"),
    data: {
      threshold: 7,
      certificate: {
        id: "cert_3kT9vQm2Xy7LpA0bN5cZ",
        domain: "example.com",
        name: "x".repeat(5000),
        status: "expiring",
        daysUntilExpiry: 7,
        expiresAt: "2026-05-12T10:00:00.000Z",
        issuedAt: "2026-02-11T10:00:00.000Z",
        issuer: hostile,
        subject: "example.com",
        subjectAlternativeNames: ["example.com"],
        serialNumber: "04:A3",
        signatureAlgorithm: "sha256WithRSAEncryption",
        port: 443,
        alertThresholds: [7],
        lastCheckedAt: "2026-05-05T09:00:00.000Z",
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-05-05T09:00:00.000Z",
        chain: [],
        statusReason: "expiring_soon",
        tags: [],
        mutedUntil: null,
      },
    },
  };

  test("Teams: link, emphasis and list syntax in certificate text is escaped", () => {
    const text = JSON.stringify(teamsPayload(event, describeEvent(event)));
    expect(text).not.toContain("[click me](https://evil.example)");
    expect(text).toContain("\\\\[click me\\\\](https://evil.example)");
    expect(text).not.toContain("**now**");
    // Nothing else is escaped: "(5 days)" reads as it is.
    expect(text).not.toContain("\\\\(");
  });

  test("Telegram: plain text, no parse_mode, at most 4096 characters", () => {
    const body = telegramPayload(event, describeEvent(event), 42);
    expect(Object.keys(body).sort()).toEqual(["chat_id", "text"]);
    expect(body.text.length).toBeLessThanOrEqual(4096);
    expect(body.text).toContain("example.com");
  });

  test("PagerDuty: the summary is at most 1024 characters, whatever the name", () => {
    const long = { ...event, data: { ...event.data, certificate: { ...(event.data.certificate as object), domain: `${"a".repeat(60)}.${"b".repeat(60)}.example.com` } } };
    const [request] = pagerdutyRequests(long, { ...describeEvent(long), headline: "h".repeat(3000) }, { baseUrl: "http://x", routingKey: ROUTING_KEY });
    expect(JSON.parse(request!.body).payload.summary.length).toBe(1024);
  });
});
