/**
 * Scale-out (§19 with §9): two `serve` processes on one real sqld, one leaf served to
 * two organizations, each adding it through another process at the same moment, then both
 * certificates checked through both processes at once, again and again. The CA answers slowly (half a
 * second) with a window that ends before the lifetime's midpoint: a request for early replacement.
 *
 * CONTRACT §19: "Answers are shared by every certificate and organization that serves the same leaf,
 * and across processes (kept in the database). The next request for a leaf comes after the answer's
 * `Retry-After` (clamped to 1 minute–24 hours; 6 hours when absent)" and "A window ending before the
 * lifetime midpoint on the first answer for a serial […] means the CA asks for early replacement […]:
 * one `certificate.renewal_requested` per serial and window end".
 * CONTRACT §9: "an event is delivered once per channel".
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe } from "./support/cli.ts";
import { certIdOf, startAriServer } from "./support/ari_server.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { until } from "./support/until.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(180_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-scale-ari-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe("a CA's request for early replacement, seen by two processes", () => {
  test("the CA asked once per leaf; one renewal_requested per certificate, delivered once", async () => {
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const ari = await startAriServer({ tlsIssuer: rsaIntermediate });
    cleanups.push(() => ari.close());
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const receiver = await startHttpReceiver();
    cleanups.push(() => receiver.close());

    const keys: string[] = [];
    for (const name of ["ARI race One", "ARI race Two"]) keys.push((await seedOwner(sqld.url, { name, plan: "enterprise", limits: { requestsPerMinute: 100_000 } })).key);

    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_TLS_TIMEOUT: "5s",
      CERTKEEPER_REVOCATION: "off",
      CERTKEEPER_DNS_SERVERS: "off",
      CERTKEEPER_CHECK_INTERVAL: "1s",
      CERTKEEPER_DELIVERY_RETRY: "300ms,1s",
      CERTKEEPER_ACME_DIRECTORIES: `certkeeper Test RSA CA=${ari.directoryUrl}`,
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    const servers = [a, b];
    for (const [i, key] of keys.entries()) {
      expect((await callServe(servers[i]!, key, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: `${receiver.url}/hook${i}` } })).status).toBe(201);
    }

    const COUNT = 3;
    const leaves = [];
    for (let i = 0; i < COUNT; i++) {
      const domain = `ari-race${i}.${TEST_DOMAIN}`;
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
      const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      cleanups.push(() => server.close());
      // About half a second to answer, a window of today: it ends long before the lifetime's midpoint.
      ari.answer(certIdOf(leaf), { kind: "trickle", everyMs: 5 });
      leaves.push({ domain, leaf, port: server.port });
    }

    // Each organization adds each leaf through its own process, at the same moment.
    const ids: string[][] = [[], []];
    await Promise.all(
      leaves.map(async ({ domain, port }) => {
        const added = await Promise.all(keys.map((key, i) => callServe(servers[i]!, key, "POST", "/v1/certificates", { domain, port })));
        added.forEach((response, i) => {
          expect(response.status).toBe(201);
          ids[i]!.push(response.body.data.id);
        });
      }),
    );
    // Then every certificate checked through both processes at once, for a few seconds.
    const end = Date.now() + 4_000;
    while (Date.now() < end) {
      await Promise.all(keys.flatMap((key, i) => ids[i]!.flatMap((id) => servers.map((server) => callServe(server, key, "POST", `/v1/certificates/${id}/check`)))));
    }

    for (const [i, key] of keys.entries()) {
      for (const id of ids[i]!) {
        const record = (await callServe(servers[1 - i]!, key, "GET", `/v1/certificates/${id}`)).body.data;
        expect([record.renewal.source, record.renewal.state, record.statusReason]).toEqual(["ari", "requested", "renewal_requested"]);
      }
    }
    // The CA was asked once about each leaf (no Retry-After: the next question is 6 hours away).
    for (const { leaf } of leaves) expect(ari.requests.filter((r) => r.certId === certIdOf(leaf)).length).toBe(1);
    // One renewal_requested per certificate, delivered once to its organization.
    for (const [i, key] of keys.entries()) {
      const events = await until(`organization ${i}'s events delivered`, async () => {
        const list = (await callServe(servers[i]!, key, "GET", "/v1/events?limit=100")).body.data.filter((e: any) => e.type === "certificate.renewal_requested");
        return list.length >= COUNT && list.every((e: any) => e.deliveries.every((d: any) => d.status === "delivered")) ? list : null;
      });
      expect(events.map((e: any) => e.certificateId).sort()).toEqual([...ids[i]!].sort());
      const hooks = receiver.requests.filter((r) => r.path === `/hook${i}` && r.json?.type === "certificate.renewal_requested");
      expect(hooks.map((r) => r.json.data.certificate.id).sort()).toEqual([...ids[i]!].sort());
    }
  });
});
