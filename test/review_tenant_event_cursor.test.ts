/**
 * review(tenant): GET /v1/events's cursor is the installation-wide event sequence number. What one
 * organization sees of its own event list must not depend on what another organization (or its own
 * other mode) raised meanwhile (CONTRACT §3, §4): here organization A raises one test event, B raises
 * some, A raises another, and A reads its first page. A's cursor is the same whether B raised 0 or 5
 * events in between when no leak; today it is [seq] of A's newest event, so the gap between A's two
 * cursors counts B's events exactly (and a test key's cursor counts its organization's live events).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type StoreKind } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

let receiver: HttpReceiver;
let transports: ReturnType<typeof createTransports>;

beforeAll(async () => {
  const { root } = await testPki();
  const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }] };
  transports = createTransports(config, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  receiver = await startHttpReceiver();
  receiver.answer = () => ({ status: 204 });
});
afterAll(async () => {
  await receiver.close();
  await transports.close();
});

/** A's first page cursor (limit 1) after A, then `others` events elsewhere, then A again. */
async function cursorOfA(store: StoreKind, others: number, elsewhere: "other organization" | "own live mode"): Promise<string | null> {
  const clock = new FakeClock(Date.UTC(2026, 5, 1));
  const h = await createHarness({ store, transports, clock, config: { deliveryTimeoutMs: 1000 } });
  try {
    // A: the test-mode key of the harness's organization when the "elsewhere" is its own live mode.
    const aKey = elsewhere === "own live mode" ? h.keys.test.key : h.keys.owner.key;
    let bKey = h.keys.owner.key;
    if (elsewhere === "other organization") {
      const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "enterprise" });
      bKey = (await h.makeKey("owner", "live", other.id)).key;
    }
    const channel = async (key: string) =>
      expectData(await h.request("POST", "/v1/channels", { key, body: { type: "webhook", name: "hook", config: { url: `${receiver.url}/ok` } } }), 201).id;
    const a = await channel(aKey);
    const b = await channel(bKey);
    expectData(await h.request("POST", `/v1/channels/${a}/test`, { key: aKey }), 200);
    for (let i = 0; i < others; i++) expectData(await h.request("POST", `/v1/channels/${b}/test`, { key: bKey }), 200);
    expectData(await h.request("POST", `/v1/channels/${a}/test`, { key: aKey }), 200);
    const page = await h.request("GET", "/v1/events?limit=1", { key: aKey });
    expect(expectData(page, 200)).toHaveLength(1);
    return page.body.meta.nextCursor;
  } finally {
    await h.close();
  }
}

for (const store of ["memory", "libsql"] as const) {
  describe(`${store} store`, () => {
    test("A's events cursor does not count another organization's events", async () => {
      const quiet = await cursorOfA(store, 0, "other organization");
      const busy = await cursorOfA(store, 5, "other organization");
      expect(quiet).not.toBeNull();
      expect(busy).toBe(quiet);
    });

    test("a test key's events cursor does not count its organization's live events", async () => {
      const quiet = await cursorOfA(store, 0, "own live mode");
      const busy = await cursorOfA(store, 5, "own live mode");
      expect(quiet).not.toBeNull();
      expect(busy).toBe(quiet);
    });
  });
}
