/**
 * Review (CONTRACT §23 "Delivery health": "Every failed delivery attempt is logged at `warn` (channel
 * id, event id, attempt, the error, never a credential); a delivery that ends `failed` at `error`.").
 * The attempt that ends a delivery failed is a failed attempt too, but it gets only the `error` line:
 * there is no `warn` line for it (core/notify/deliverer.ts #recordHealth logs one or the other).
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

test("a failed attempt that ends the delivery failed is logged at warn too (and the delivery at error)", async () => {
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
  expect(mine).toContainEqual(expect.objectContaining({ level: "error", attempt: 1 }));
  expect(mine).toContainEqual(expect.objectContaining({ level: "warn", attempt: 1, error: "The endpoint answered HTTP 500" }));
});
