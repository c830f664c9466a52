/**
 * An events cursor whose event retention removed between two pages still goes on (CONTRACT §7: "cursor-
 * paginated like the certificate list", which neither skips nor repeats an item while others are added
 * or removed; §16: an event whose delivery is pending is never deleted, so it outlives newer ones): the
 * older event kept comes on the next page, where the page was refused as "the place is lost".
 *
 * That very millisecond included: an event of the same millisecond (one check raises several) stored
 * before the removed one and kept for its pending delivery comes on the next page, never passed over.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, loopbackTransports, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";

const MINUTE = 60_000;
const START = Math.floor(Date.now() / 1000) * 1000;
const servers: TlsTestServer[] = [];
const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("ok") });
afterAll(async () => {
  receiver.stop(true);
  await Promise.all(servers.map((s) => s.close()));
});

for (const kind of ["memory", "libsql"] as const) {
  describe(`${kind} store`, () => {
    test("an event that existed for the whole walk still comes after retention removed the cursor's event", async () => {
      const clock = new FakeClock(START);
      const h = await createHarness({ store: kind, clock, transports: await loopbackTransports(), config: { eventRetentionMs: 60 * MINUTE } });
      try {
        const channel = expectData(
          await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "sync", config: { url: `http://127.0.0.1:${receiver.port}/` } } }),
          201,
        );
        // t = 0: a certificate with 5 days left raises certificate.expiring; its delivery stays pending
        // (no deliverer runs in this process), so retention never deletes this event.
        const { rsaIntermediate } = await testPki();
        const domain = `soon.${TEST_DOMAIN}`;
        const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(START + 5 * DAY + 3_600_000) });
        const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
        servers.push(server);
        expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
        const [kept] = expectData(await h.request("GET", "/v1/events"), 200);
        expect(kept.type).toBe("certificate.expiring");
        expect(kept.deliveries.map((d: any) => d.status)).toEqual(["pending"]);

        // t = 10 min: three test events (delivered at once, nothing pending). t = 50 min: one more.
        clock.advance(10 * MINUTE);
        for (let i = 0; i < 3; i++) expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
        clock.advance(40 * MINUTE);
        expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
        const everything = expectData(await h.request("GET", "/v1/events?limit=100"), 200).map((e: any) => e.id);
        expect(everything.length).toBe(5);
        expect(everything.at(-1)).toBe(kept.id);

        // The sync job reads its first page: the newest two.
        const first = await h.request("GET", "/v1/events?limit=2");
        expect(expectData(first, 200).map((e: any) => e.id)).toEqual(everything.slice(0, 2));
        const cursor = first.body.meta.nextCursor;
        expect(typeof cursor).toBe("string");

        // t = 75 min: retention removes the three 10-minute-old test events (the cursor's among them);
        // the pending one of t = 0 stays, as §16 says.
        clock.advance(25 * MINUTE);
        await h.core.services.retention.runOnce();
        const after = expectData(await h.request("GET", "/v1/events?limit=100"), 200).map((e: any) => e.id);
        expect(after).toEqual([everything[0], kept.id]);

        // The next page: the event kept, which existed for the whole walk, then the end of the list.
        const second = await h.request("GET", `/v1/events?limit=2&cursor=${cursor}`);
        expect({ status: second.status, error: second.body.error?.code ?? null }).toEqual({ status: 200, error: null });
        expect(second.body.data.map((e: any) => e.id)).toEqual([kept.id]);
        expect(second.body.meta.nextCursor).toBeNull();
      } finally {
        await h.close();
      }
    });

    test("a kept event of the same millisecond as the cursor's removed event still comes on the next page", async () => {
      const clock = new FakeClock(START);
      const h = await createHarness({ store: kind, clock, transports: await loopbackTransports(), config: { eventRetentionMs: 60 * MINUTE } });
      try {
        const channel = expectData(
          await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "sync", config: { url: `http://127.0.0.1:${receiver.port}/` } } }),
          201,
        );
        // t = 0: certificate.expiring, its delivery pending (no deliverer runs): retention keeps it.
        const { rsaIntermediate } = await testPki();
        const domain = `same-ms.${TEST_DOMAIN}`;
        const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(START + 5 * DAY + 3_600_000) });
        const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
        servers.push(server);
        expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
        const [kept] = expectData(await h.request("GET", "/v1/events"), 200);
        expect(kept.type).toBe("certificate.expiring");
        expect(kept.deliveries.map((d: any) => d.status)).toEqual(["pending"]);
        // Still t = 0 (same millisecond): a test event, delivered at once (nothing pending).
        expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
        // t = 50 min: one more test event.
        clock.advance(50 * MINUTE);
        expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
        const everything = expectData(await h.request("GET", "/v1/events?limit=100"), 200);
        expect(everything.map((e: any) => e.type)).toEqual(["test", "test", "certificate.expiring"]);
        expect(everything[1].createdAt).toBe(kept.createdAt);

        // First page: the newest two (the cursor names the t = 0 test event).
        const first = await h.request("GET", "/v1/events?limit=2");
        expect(expectData(first, 200).map((e: any) => e.id)).toEqual([everything[0].id, everything[1].id]);
        const cursor = first.body.meta.nextCursor;

        // t = 75 min: retention removes the t = 0 test event; the pending certificate.expiring stays.
        clock.advance(25 * MINUTE);
        await h.core.services.retention.runOnce();
        expect(expectData(await h.request("GET", "/v1/events?limit=100"), 200).map((e: any) => e.id)).toEqual([everything[0].id, kept.id]);

        const second = await h.request("GET", `/v1/events?limit=2&cursor=${cursor}`);
        expect(second.status).toBe(200);
        expect(second.body.data.map((e: any) => e.id)).toEqual([kept.id]);
      } finally {
        await h.close();
      }
    });
  });
}
