/**
 * Scale-out (§18 with §9): two `serve` processes on one real sqld check the same
 * certificates around their renewal deadline: each process's scheduler, and POST
 * /v1/certificates/{id}/check sent to both processes at once, over and over, across the deadline.
 *
 * CONTRACT §18: "When the deadline passes and an answering endpoint, checked at that moment […], still
 * serves the leaf: one `certificate.renewal_overdue` […], at most once per serial".
 * CONTRACT §9: "a certificate is checked by one process at a time (a lease in the database), an event
 * is delivered once per channel".
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HOUR } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe, type ServeProcess } from "./support/cli.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { until } from "./support/until.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(180_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-scale-overdue-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

describe("renewal deadline passing while two processes check the certificate", () => {
  test("one certificate.renewal_overdue per certificate, delivered once, however many checks race at the deadline", async () => {
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const receiver = await startHttpReceiver();
    cleanups.push(() => receiver.close());

    const { key } = await seedOwner(sqld.url, { name: "Overdue race", plan: "enterprise", limits: { requestsPerMinute: 100_000 } });

    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_TLS_TIMEOUT: "3s",
      CERTKEEPER_REVOCATION: "off",
      CERTKEEPER_DNS_SERVERS: "off",
      CERTKEEPER_ARI: "off",
      CERTKEEPER_ALERT_POLICY: "renewal",
      CERTKEEPER_DELIVERY_RETRY: "300ms,1s",
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    expect((await callServe(a, key, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: `${receiver.url}/hook` } })).status).toBe(201);

    // Three-hour leaves (under 10 days: the deadline is at two thirds of the lifetime), each deadline
    // 25 s from now, so that it comes while both processes run and the checks below race across it.
    const COUNT = 4;
    const deadline = Date.now() + 25_000;
    const ids: string[] = [];
    for (let i = 0; i < COUNT; i++) {
      const domain = `overdue-race${i}.${TEST_DOMAIN}`;
      const notBefore = deadline - 2 * HOUR;
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notBefore + 3 * HOUR) });
      const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      cleanups.push(() => server.close());
      const added = await callServe(i % 2 ? b : a, key, "POST", "/v1/certificates", { domain, port: server.port });
      expect(added.status).toBe(201);
      ids.push(added.body.data.id);
    }
    const shown = (await callServe(a, key, "GET", `/v1/certificates/${ids[0]}`)).body.data;
    expect(shown.renewal.state).toBe("not_due");
    expect(Date.parse(shown.renewal.deadline)).toBeGreaterThan(Date.now());

    // From 3 s before the deadline to 4 s after it: each certificate checked through both processes at once, again and again.
    while (Date.now() < deadline - 3_000) await Bun.sleep(50);
    const statuses: number[] = [];
    while (Date.now() < deadline + 4_000) {
      const round = await Promise.all(ids.flatMap((id) => [a, b].map((server) => callServe(server, key, "POST", `/v1/certificates/${id}/check`))));
      statuses.push(...round.map((r) => r.status));
    }
    expect(statuses.every((status) => status === 200)).toBe(true);

    // Every certificate is overdue now…
    await until("every certificate overdue", async () => {
      for (const id of ids) {
        const record = (await callServe(b, key, "GET", `/v1/certificates/${id}`)).body.data;
        if (record.statusReason !== "renewal_overdue") return false;
      }
      return true;
    });
    // …and one more check through each process, saved after everything above: nothing more is owed.
    for (const id of ids) for (const server of [a, b]) expect((await callServe(server, key, "POST", `/v1/certificates/${id}/check`)).status).toBe(200);
    const overdue = async () =>
      (await callServe(a, key, "GET", "/v1/events?limit=100")).body.data.filter((event: any) => event.type === "certificate.renewal_overdue");
    const events = await until("the overdue events delivered", async () => {
      const list = await overdue();
      return list.length >= COUNT && list.every((event: any) => event.deliveries.every((d: any) => d.status === "delivered")) ? list : null;
    });
    // One event per certificate…
    expect(events.map((event: any) => event.certificateId).sort()).toEqual([...ids].sort());
    // …each delivered once.
    await until("the deliveries", async () => receiver.requests.filter((r) => r.path === "/hook").length >= COUNT);
    const hooks = receiver.requests.filter((r) => r.path === "/hook" && r.json?.type === "certificate.renewal_overdue");
    expect(hooks.map((r) => r.json.data.certificate.id).sort()).toEqual([...ids].sort());
  });
});
