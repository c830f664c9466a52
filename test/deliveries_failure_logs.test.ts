/**
 * Delivery health (CONTRACT §23): every failed delivery attempt is logged at `warn` (channel id, event
 * id, attempt, the error); a delivery that ends `failed` is logged at `error` besides. The attempt that
 * ends a delivery failed (here a channel test's one attempt) gets both lines.
 */
import { afterAll, expect, test } from "bun:test";
import { createLogger } from "../core/base/log.ts";
import { DEFAULT_CONFIG } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { testPki } from "./support/harness.ts";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";

let h: Harness;
let receiver: HttpReceiver;
afterAll(async () => {
  await h?.close();
  await receiver?.close();
});

test("the failed attempt that ends a delivery failed is logged at warn, and the delivery at error", async () => {
  const lines: Record<string, any>[] = [];
  const logger = createLogger("info", { write: (line: string) => lines.push(JSON.parse(line)), format: "json" });
  receiver = await startHttpReceiver();
  receiver.answer = () => ({ status: 500 });
  const { root } = await testPki();
  const transports = createTransports({ ...DEFAULT_CONFIG, allowPrivateTargets: true }, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  h = await createHarness({ logger, transports });
  const close = h.close;
  h.close = async () => {
    await close();
    await transports.close();
  };
  const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook` } } }), 201);
  const result = expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
  expect(result.status).toBe("failed");
  const mine = lines.filter((l) => l.channelId === channel.id && l.eventId === result.eventId);
  expect(mine.map((l) => [l.level, l.msg])).toEqual([
    ["warn", "notification attempt failed"],
    ["error", "notification delivery failed"],
  ]);
  expect(mine[0]).toMatchObject({ attempt: 1, error: "The endpoint answered HTTP 500", willRetry: false, channelType: "webhook" });
  expect(mine[1]).toMatchObject({ attempt: 1, error: "The endpoint answered HTTP 500" });
});
