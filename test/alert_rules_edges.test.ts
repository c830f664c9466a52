/**
 * Alert rules at their edges, each asserted end to end with certificates on real TLS servers, a real
 * webhook receiver, time moved by a fake clock, on the in-memory store and on a libSQL file alike.
 *
 * - CONTRACT §7: `certificate.recovered` is raised when a certificate goes back to `valid` *or*
 *   `expiring` from `unreachable`.
 * - CONTRACT §5/§7: `expired` means now is past notAfter; at notAfter itself the certificate is not
 *   expired yet, and no `certificate.expired` is raised before the status says so.
 * - CONTRACT §7: only a 2xx counts as delivered; a 300 answer is a failed attempt, retried.
 * - CONTRACT §7: `certificate.invalid` and `certificate.unreachable` are raised on each change to that
 *   status, whatever the status before (invalid → unreachable → invalid), not only from a healthy one.
 * - CONTRACT §5/§7: a certificate whose server is down still crosses its thresholds and expires: those
 *   alerts are raised on the last certificate seen (the status goes from unreachable to expired).
 * - CONTRACT §7: a renewal re-arms the certificate's alerts, its expiry too: an expired certificate
 *   renewed whose new certificate expires in turn raises certificate.expired again.
 * - A failed scheduled check is retried shortly (twice) before the outage is declared: the
 *   `certificate.unreachable` alert comes minutes after the outage is first seen, not intervals later.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, type StoreKind } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { FakeClock } from "./support/fake_clock.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

interface World {
  h: Harness;
  clock: FakeClock;
  hook: HttpReceiver;
  settle(): Promise<void>;
  /** The event types the webhook received, in order. */
  received(): string[];
}

async function world(store: StoreKind, config: Partial<Config> = {}): Promise<World> {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  // Whole seconds: X.509 times are, so a test can stand exactly on a certificate's notAfter.
  const clock = new FakeClock(Math.floor(Date.now() / 1000) * 1000);
  const full: Config = {
    ...DEFAULT_CONFIG,
    alertPolicy: "days",
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 5000,
    deliveryRetryMs: [1000, 5000, 60_000],
    deliveryTimeoutMs: 5000,
    checkIntervalMs: 6 * HOUR,
    logLevel: "error",
    ...config,
  };
  const transports = createTransports(full, trust);
  // random 0.5: the ±10 % jitter is pinned to the wait itself.
  const h = await createHarness({ store, clock, config: full, transports, trust, random: () => 0.5 });
  const hook = await startHttpReceiver();
  cleanups.push(() => hook.close(), () => transports.close(), () => h.close());
  expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${hook.url}/hook` } } }), 201);
  return {
    h,
    clock,
    hook,
    async settle() {
      await h.core.services.scheduler.runDue();
      await h.core.services.deliveries!.loop.runDue();
    },
    received: () => hook.requests.filter((r) => r.path === "/hook").map((r) => r.json.type),
  };
}

async function leafPem(domain: string, notAfter: Date) {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter });
  return { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
}

async function serve(pem: { cert: string; key: string }, port?: number): Promise<TlsTestServer> {
  const server = await startTlsServer({ ...pem, ...(port !== undefined && { port }) });
  cleanups.push(() => server.close());
  return server;
}

for (const store of ["memory", "libsql"] as const) {
  describe(`${store} store`, () => {
    test("an expiring certificate back from an outage, serving the same leaf, is announced as recovered once", async () => {
      const w = await world(store, { checkIntervalMs: 60_000 });
      const domain = `back-expiring.${TEST_DOMAIN}`;
      // 20 days left: inside the largest default threshold (30), so `expiring`, and it stays so.
      const pem = await leafPem(domain, new Date(w.clock.now() + 20 * DAY + HOUR));
      const server = await serve(pem);
      const port = server.port;
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
      await w.settle();
      expect(w.received()).toEqual(["certificate.expiring"]);

      await server.close();
      for (let i = 0; i < 6; i++) {
        w.clock.advance(60_000);
        await w.settle();
      }
      expect(w.received()).toEqual(["certificate.expiring", "certificate.unreachable"]);
      expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).status).toBe("unreachable");

      // The same leaf again (no renewal): the certificate is `expiring` again, which is a recovery.
      await serve(pem, port);
      for (let i = 0; i < 3; i++) {
        w.clock.advance(60_000);
        await w.settle();
      }
      const shown = expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200);
      expect([shown.status, shown.statusReason]).toEqual(["expiring", "expiring_soon"]);
      expect(w.received()).toEqual(["certificate.expiring", "certificate.unreachable", "certificate.recovered"]);
      const recovered = w.hook.requests.filter((r) => r.path === "/hook").at(-1)!.json;
      expect(recovered.data.certificate).toMatchObject({ id: cert.id, status: "expiring" });
      const events = expectData(await w.h.request("GET", "/v1/events"), 200);
      expect(events.map((e: { type: string }) => e.type)).toEqual(["certificate.recovered", "certificate.unreachable", "certificate.expiring"]);
    });

    test("at notAfter itself a certificate is not expired and no certificate.expired is raised; a millisecond later it is, once", async () => {
      const w = await world(store);
      const domain = `edge.${TEST_DOMAIN}`;
      const server = await serve(await leafPem(domain, new Date(w.clock.now() + 2 * DAY)));
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [] } }), 201);
      await w.settle();
      expect(w.received()).toEqual([]);
      const notAfter = Date.parse(cert.expiresAt);
      expect(notAfter % 1000).toBe(0);

      w.clock.set(notAfter);
      const atEdge = expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      expect(atEdge.status).toBe("expiring");
      await w.h.core.services.deliveries!.loop.runDue();
      expect(w.received()).toEqual([]);
      expect(expectData(await w.h.request("GET", "/v1/events"), 200)).toEqual([]);

      w.clock.set(notAfter + 1);
      const past = expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
      expect(past.status).toBe("expired");
      await w.settle();
      w.clock.advance(HOUR);
      await w.settle();
      expect(w.received()).toEqual(["certificate.expired"]);
    });

    test("a scheduled check that fails is retried within minutes, not at the next interval: the outage is announced minutes after it is seen", async () => {
      const w = await world(store, { checkIntervalMs: 6 * HOUR });
      const domain = `down-soon.${TEST_DOMAIN}`;
      const server = await serve(await leafPem(domain, new Date(w.clock.now() + 200 * DAY)));
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
      await w.settle();
      await server.close();
      // Past the regular check (its phase within the interval): it fails, and announces nothing yet.
      w.clock.advance(7 * HOUR);
      await w.settle();
      expect(w.received()).toEqual([]);
      expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).status).toBe("valid");
      // The retries come within minutes; the third failure declares the outage.
      for (let i = 0; i < 20; i++) {
        w.clock.advance(15_000);
        await w.settle();
      }
      expect(w.received()).toEqual(["certificate.unreachable"]);
      expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).status).toBe("unreachable");
    });

    test("during an outage, time still passes: a threshold crossed and the expiry are announced on the last certificate seen", async () => {
      const w = await world(store, { checkIntervalMs: HOUR });
      const domain = `down-at-expiry.${TEST_DOMAIN}`;
      const server = await serve(await leafPem(domain, new Date(w.clock.now() + 8 * DAY + 2 * HOUR)));
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [7] } }), 201);
      await w.settle();
      expect(w.received()).toEqual([]);
      await server.close();
      const notAfter = Date.parse(cert.expiresAt);
      // Hour by hour through the outage, past threshold 7 (crossed 1 day and 2 hours after the add) and past expiry.
      while (w.clock.now() < notAfter + 2 * HOUR) {
        w.clock.advance(HOUR);
        await w.settle();
      }
      expect(w.received()).toEqual(["certificate.unreachable", "certificate.expiring", "certificate.expired"]);
      const expiring = w.hook.requests.filter((r) => r.path === "/hook")[1]!.json;
      expect(expiring.data.threshold).toBe(7);
      expect(expiring.data.certificate).toMatchObject({ id: cert.id, status: "unreachable", daysUntilExpiry: 7 });
      const shown = expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200);
      expect([shown.status, shown.statusReason]).toEqual(["expired", "expired"]);
    });

    test("invalid, then down, then back still invalid, then fixed: invalid, unreachable, invalid, recovered, each once", async () => {
      const w = await world(store, { checkIntervalMs: 60_000 });
      const domain = `bad-then-down.${TEST_DOMAIN}`;
      const { rsaIntermediate } = await testPki();
      const wrong = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`other.${TEST_DOMAIN}`], notAfter: new Date(w.clock.now() + 200 * DAY) });
      const wrongPem = { cert: chainPem(wrong, rsaIntermediate), key: wrong.keyPem };
      const server = await serve(wrongPem);
      const port = server.port;
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
      const steps = async (n: number) => {
        for (let i = 0; i < n; i++) {
          w.clock.advance(60_000);
          await w.settle();
        }
      };
      await w.settle();
      expect(w.received()).toEqual(["certificate.invalid"]);

      await server.close();
      await steps(6);
      expect(w.received()).toEqual(["certificate.invalid", "certificate.unreachable"]);
      expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).status).toBe("unreachable");

      // Back, still serving the leaf for another name: invalid again (not recovered).
      const back = await serve(wrongPem, port);
      await steps(3);
      expect(w.received()).toEqual(["certificate.invalid", "certificate.unreachable", "certificate.invalid"]);
      expect(expectData(await w.h.request("GET", `/v1/certificates/${cert.id}`), 200).statusReason).toBe("hostname_mismatch");

      // Fixed (the same name's leaf): recovered.
      const right = await leafPem(domain, new Date(w.clock.now() + 200 * DAY));
      back.setCertificate(right.cert, right.key);
      await steps(3);
      const types = w.received();
      expect(types.slice(0, 3)).toEqual(["certificate.invalid", "certificate.unreachable", "certificate.invalid"]);
      // Raised by one check and delivered concurrently with the renewal: either order.
      expect(types.slice(3).sort()).toEqual(["certificate.recovered", "certificate.renewed"]);
    });

    test("an expired certificate renewed, whose new certificate expires in turn: certificate.expired again, for the new serial", async () => {
      const w = await world(store);
      const domain = `lapses-twice.${TEST_DOMAIN}`;
      const { rsaIntermediate } = await testPki();
      const first = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(w.clock.now() + DAY), serial: "0e01" });
      const server = await serve({ cert: chainPem(first, rsaIntermediate), key: first.keyPem });
      const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: [] } }), 201);
      const steps = async (n: number) => {
        for (let i = 0; i < n; i++) {
          w.clock.advance(6 * HOUR);
          await w.settle();
        }
      };
      await steps(6); // a day and a half: past the first expiry
      expect(w.received()).toEqual(["certificate.expired"]);

      const second = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(w.clock.now() + 2 * DAY), serial: "0e02" });
      server.setCertificate(chainPem(second, rsaIntermediate), second.keyPem);
      expect(expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200).status).toBe("expiring");
      await w.h.core.services.deliveries!.loop.runDue();
      expect(w.received()).toEqual(["certificate.expired", "certificate.renewed"]);

      await steps(10); // two and a half days: past the second expiry
      expect(w.received()).toEqual(["certificate.expired", "certificate.renewed", "certificate.expired"]);
      const last = w.hook.requests.filter((r) => r.path === "/hook").at(-1)!.json;
      expect([last.data.certificate.serialNumber, last.data.certificate.status]).toEqual(["0E:02", "expired"]);
    });

    test("a webhook answered 300 is not delivered: the attempt failed, is retried on the schedule, and delivered by the next 2xx (a 204)", async () => {
      const w = await world(store);
      w.hook.answer = (n) => ({ status: n === 0 ? 300 : 204 });
      const domain = `multiple-choices.${TEST_DOMAIN}`;
      const server = await serve(await leafPem(domain, new Date(w.clock.now() + 10 * DAY + HOUR)));
      expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
      await w.settle();
      expect(w.received()).toEqual(["certificate.expiring"]);
      let [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
      expect(event.deliveries).toHaveLength(1);
      expect(event.deliveries[0]).toMatchObject({ status: "pending", attempts: 1, lastError: expect.stringContaining("300") });

      w.clock.advance(1000); // the first wait of the schedule
      await w.settle();
      expect(w.received()).toEqual(["certificate.expiring", "certificate.expiring"]);
      [event] = expectData(await w.h.request("GET", "/v1/events"), 200);
      expect(event.deliveries[0]).toMatchObject({ status: "delivered", attempts: 2, lastError: null });
    });
  });
}
