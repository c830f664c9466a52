/**
 * Channel routing of an event without a certificate (CONTRACT §16): `certificate.issued`, found by a
 * watch in a CT search service, "matches only filters without `tags`": it reaches the unfiltered
 * channel and the events-only one, never a channel filtering by tags. End to end: a real CT search
 * service, the watch poller on a fake clock, real webhook receivers, on the in-memory store and a
 * libSQL file.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { HOUR } from "../core/base/time.ts";
import { createHarness, expectData, loopbackTransports, testPki, TEST_DOMAIN, type StoreKind } from "./support/harness.ts";
import { createLeaf } from "./support/pki.ts";
import { startCtServer } from "./support/ct_server.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

for (const store of ["memory", "libsql"] as const satisfies StoreKind[]) {
  describe(`${store} store`, () => {
    test("certificate.issued goes to channels without a filter or with an events-only filter, never to a channel filtering on tags", async () => {
      const ct = await startCtServer();
      const transports = await loopbackTransports();
      const clock = new FakeClock(Date.now());
      const h = await createHarness({ store, clock, transports, config: { ctUrl: ct.url, ctIntervalMs: HOUR } });
      const hook = await startHttpReceiver();
      cleanups.push(() => ct.close(), () => transports.close(), () => h.close(), () => hook.close());

      const channel = async (name: string, filter?: unknown) =>
        expectData(
          await h.request("POST", "/v1/channels", { body: { type: "webhook", name, config: { url: `${hook.url}/${name}` }, ...(filter !== undefined && { filter }) } }),
          201,
        );
      const open = await channel("open");
      const issuedOnly = await channel("issued-only", { events: ["certificate.issued"] });
      const tagged = await channel("tagged", { tags: ["team:web"] });
      const issuedAndTagged = await channel("issued-and-tagged", { events: ["certificate.issued"], tags: ["team:web"] });

      const { rsaIntermediate } = await testPki();
      const domain = `routing-${store}.${TEST_DOMAIN}`;
      ct.log(await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain] }), rsaIntermediate);
      const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain } }), 201);
      const poller = h.core.services.watches as unknown as { runDue(): Promise<number> };
      await poller.runDue(); // the baseline: what was issued before the watch raises nothing

      ct.log(await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [`www.${domain}`] }), rsaIntermediate);
      clock.advance(HOUR + 1);
      await poller.runDue();
      expect(expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).issuancesSeen).toBe(2);

      const [issued] = expectData(await h.request("GET", "/v1/events"), 200);
      expect([issued.type, issued.certificateId]).toEqual(["certificate.issued", null]);
      expect(issued.deliveries.map((d: { channelId: string }) => d.channelId).sort()).toEqual([open.id, issuedOnly.id].sort());

      await h.core.services.deliveries!.loop.runDue();
      expect(hook.requests.map((r) => [r.path, r.json.type]).sort()).toEqual([
        ["/issued-only", "certificate.issued"],
        ["/open", "certificate.issued"],
      ]);
      expect(hook.requests.some((r) => r.path === "/tagged" || r.path === "/issued-and-tagged")).toBe(false);
      expect([tagged.filter, issuedAndTagged.filter]).toEqual([{ tags: ["team:web"] }, { events: ["certificate.issued"], tags: ["team:web"] }]);
    });
  });
}
