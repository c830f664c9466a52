/**
 * PagerDuty, Microsoft Teams and Telegram channels (CONTRACT §16), delivered to local receivers that
 * check every request against each service's documented wire format (test/support/service_shapes.ts).
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DAY, HOUR } from "../core/base/time.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { BOT_TOKEN, fleetWorld, ROUTING_KEY, type FleetWorld } from "./support/fleet_world.ts";
import {
  pagerdutyAlertProblems,
  pagerdutyChangeProblems,
  teamsCardText,
  teamsMessageProblems,
  telegramSendMessageProblems,
} from "./support/service_shapes.ts";

let w: FleetWorld;
afterEach(async () => {
  await w?.close();
  w = undefined as unknown as FleetWorld;
});

async function addOncallChannels(world: FleetWorld) {
  const post = (body: unknown) => world.h.request("POST", "/v1/channels", { body });
  const pagerduty = expectData(await post({ type: "pagerduty", name: "Pager", config: { routingKey: ROUTING_KEY } }), 201);
  const teams = expectData(
    await post({ type: "teams", name: "Teams", config: { webhookUrl: `${world.teams.url}/workflows/abc/triggers/manual/paths/invoke?sig=s3cret` } }),
    201,
  );
  const telegram = expectData(await post({ type: "telegram", name: "Telegram", config: { botToken: BOT_TOKEN, chatId: -1001234567890 } }), 201);
  return { pagerduty, teams, telegram };
}

describe("creating on-call channels", () => {
  test("each is created enabled, its credential masked, its filter null", async () => {
    w = await fleetWorld();
    const { pagerduty, teams, telegram } = await addOncallChannels(w);
    expect(pagerduty).toMatchObject({ type: "pagerduty", enabled: true, config: { routingKey: "********" }, filter: null });
    expect(teams).toMatchObject({ type: "teams", config: { webhookUrl: `${w.teams.url}/workflows/abc/triggers/manual/paths/********?********` } });
    expect(telegram).toMatchObject({ type: "telegram", config: { botToken: "********", chatId: -1001234567890 } });
    const listed = expectData(await w.h.request("GET", "/v1/channels"), 200);
    expect(JSON.stringify(listed)).not.toContain(ROUTING_KEY);
    expect(JSON.stringify(listed)).not.toContain(BOT_TOKEN.split(":")[1]);
    expect(JSON.stringify(listed)).not.toContain("s3cret");
  });

  test("a masked credential sent back in a PATCH keeps the stored one; a new one replaces it", async () => {
    w = await fleetWorld();
    const { pagerduty, telegram } = await addOncallChannels(w);
    expectData(await w.h.request("PATCH", `/v1/channels/${pagerduty.id}`, { body: { config: { routingKey: "********" } } }), 200);
    expectData(await w.h.request("PATCH", `/v1/channels/${telegram.id}`, { body: { config: { botToken: "********", chatId: "@certkeeper_ops" } } }), 200);
    await w.h.request("POST", `/v1/channels/${pagerduty.id}/test`);
    await w.h.request("POST", `/v1/channels/${telegram.id}/test`);
    expect(w.pagerduty.requests[0]!.json.routing_key).toBe(ROUTING_KEY);
    expect(w.telegram.requests[0]!.path).toBe(`/tg/bot${BOT_TOKEN}/sendMessage`);
    expect(w.telegram.requests[0]!.json.chat_id).toBe("@certkeeper_ops");
  });
});

describe("test notifications", () => {
  test("PagerDuty gets a change event, Teams an Adaptive Card 1.4, Telegram a plain sendMessage", async () => {
    w = await fleetWorld();
    const { pagerduty, teams, telegram } = await addOncallChannels(w);
    for (const channel of [pagerduty, teams, telegram]) {
      const result = expectData(await w.h.request("POST", `/v1/channels/${channel.id}/test`), 200);
      expect(result).toMatchObject({ channelId: channel.id, status: "delivered", error: null });
    }
    const [change] = w.pagerduty.requests;
    expect(change!.path).toBe("/v2/change/enqueue");
    expect(change!.headers["content-type"]).toStartWith("application/json");
    expect(pagerdutyChangeProblems(change!.json)).toEqual([]);
    expect(change!.json).toMatchObject({ routing_key: ROUTING_KEY, payload: { summary: "certkeeper test notification", source: "certkeeper" } });

    const [card] = w.teams.requests;
    expect(card!.path).toBe("/workflows/abc/triggers/manual/paths/invoke?sig=s3cret");
    expect(teamsMessageProblems(card!.json)).toEqual([]);
    expect(teamsCardText(card!.json)).toContain("test notification");

    const [message] = w.telegram.requests;
    expect(message!.path).toBe(`/tg/bot${BOT_TOKEN}/sendMessage`);
    expect(telegramSendMessageProblems(message!.json)).toEqual([]);
    expect(message!.json.chat_id).toBe(-1001234567890);
    expect(message!.json.text).toContain("test notification");
  });
});

describe("a certificate's alerts on PagerDuty, Teams and Telegram", () => {
  test("expiring triggers a warning with dedup_key <id>:expiring; a renewal resolves expiring, expired, revoked, chain_expiring, renewal and not_deployed", async () => {
    w = await fleetWorld();
    await addOncallChannels(w);
    const domain = `pager.${TEST_DOMAIN}`;
    const server = await w.tlsServer(domain, new Date(w.clock.now() + 5 * DAY + HOUR), "0a01");
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    await w.settle();

    expect(w.pagerduty.requests.length).toBe(1);
    const trigger = w.pagerduty.requests[0]!;
    expect(trigger.path).toBe("/v2/enqueue");
    expect(pagerdutyAlertProblems(trigger.json)).toEqual([]);
    expect(trigger.json).toMatchObject({
      routing_key: ROUTING_KEY,
      event_action: "trigger",
      dedup_key: `${cert.id}:expiring`,
      payload: { severity: "warning", source: `${domain}:${server.port}`, summary: expect.stringContaining(domain) },
    });
    expect(w.teams.requests.length).toBe(1);
    expect(teamsMessageProblems(w.teams.requests[0]!.json)).toEqual([]);
    expect(teamsCardText(w.teams.requests[0]!.json)).toContain(domain);
    expect(w.telegram.requests.length).toBe(1);
    expect(telegramSendMessageProblems(w.telegram.requests[0]!.json)).toEqual([]);
    expect(w.telegram.requests[0]!.json.text).toContain(`${domain}:${server.port}: certificate expires in 5 days`);

    await w.renew(server, domain, new Date(w.clock.now() + 90 * DAY), "0a02");
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    await w.settle();
    const resolves = w.pagerduty.requests.slice(1);
    for (const resolve of resolves) expect(pagerdutyAlertProblems(resolve.json)).toEqual([]);
    expect(resolves.map((r) => [r.path, r.json.event_action, r.json.dedup_key])).toEqual(
      ["expiring", "expired", "revoked", "chain_expiring", "renewal", "not_deployed"].map((problem) => ["/v2/enqueue", "resolve", `${cert.id}:${problem}`]),
    );
    expect(w.telegram.requests.at(-1)!.json.text).toContain("certificate renewed");
  });

  test("renewal overdue triggers a warning with dedup_key <id>:renewal, resolved by the renewal; every message names the domain and the deadline", async () => {
    w = await fleetWorld({ config: { alertPolicy: "renewal" } });
    await addOncallChannels(w);
    const domain = `overdue.${TEST_DOMAIN}`;
    // 30 days old, 5 days left: well past three quarters of its lifetime.
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(w.clock.now() - 30 * DAY), notAfter: new Date(w.clock.now() + 5 * DAY + HOUR), serial: "0c01" });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    try {
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
      await w.settle();
      expect(w.pagerduty.requests.map((r) => [r.json.event_action, r.json.dedup_key, r.json.payload?.severity])).toEqual([["trigger", `${cert.id}:renewal`, "warning"]]);
      expect(pagerdutyAlertProblems(w.pagerduty.requests[0]!.json)).toEqual([]);
      expect(w.pagerduty.requests[0]!.json.payload.summary).toMatch(new RegExp(`^renewal overdue: ${domain}:${server.port} still serves the certificate that should have been replaced by \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC$`));
      expect(teamsMessageProblems(w.teams.requests[0]!.json)).toEqual([]);
      expect(teamsCardText(w.teams.requests[0]!.json)).toContain(`renewal overdue: ${domain}:${server.port}`);
      expect(telegramSendMessageProblems(w.telegram.requests[0]!.json)).toEqual([]);
      expect(w.telegram.requests[0]!.json.text).toContain(`renewal overdue: ${domain}:${server.port} still serves the certificate`);

      await w.renew(server, domain, new Date(w.clock.now() + 45 * DAY), "0c02");
      expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      await w.settle();
      expect(w.pagerduty.requests.slice(1).map((r) => [r.json.event_action, r.json.dedup_key])).toContainEqual(["resolve", `${cert.id}:renewal`]);
    } finally {
      await server.close();
    }
  });

  test("unreachable triggers critical; recovery resolves invalid and unreachable; expired triggers critical", async () => {
    w = await fleetWorld();
    await addOncallChannels(w);
    const domain = `down.${TEST_DOMAIN}`;
    const notAfter = new Date(w.clock.now() + 60 * DAY);
    const server = await w.tlsServer(domain, notAfter, "0b01");
    const port = server.port;
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port, alertThresholds: [] } }), 201);
    await w.settle();
    expect(w.pagerduty.requests.length).toBe(0);

    await server.close();
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    await w.settle();
    expect(w.pagerduty.requests.map((r) => [r.json.event_action, r.json.dedup_key, r.json.payload?.severity])).toEqual([
      ["trigger", `${cert.id}:unreachable`, "critical"],
    ]);

    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, serial: "0b01" });
    const back = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem, port });
    try {
      expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      await w.settle();
      expect(w.pagerduty.requests.slice(1).map((r) => [r.json.event_action, r.json.dedup_key])).toEqual([
        ["resolve", `${cert.id}:invalid`],
        ["resolve", `${cert.id}:unreachable`],
      ]);
      w.clock.advance(61 * DAY);
      await w.settle();
      const expired = w.pagerduty.requests.find((r) => r.json.dedup_key === `${cert.id}:expired`);
      expect(expired?.json).toMatchObject({ event_action: "trigger", payload: { severity: "critical" } });
      for (const request of w.pagerduty.requests) expect(pagerdutyAlertProblems(request.json)).toEqual([]);
    } finally {
      await back.close();
    }
  });
});
