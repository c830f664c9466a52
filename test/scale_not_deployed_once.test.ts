/**
 * Scale-out (§20 and §21 with §9): two `serve` processes on one real sqld, following
 * fixture CT logs (CERTKEEPER_CT_SOURCE=logs). An issuance of a monitored certificate's names is
 * recorded by the follower (in one process), noted by a watch's poll (in either), while both processes
 * check the certificate again and again through POST /v1/certificates/{id}/check and their
 * schedulers; the servers keep the old leaf past the grace.
 *
 * CONTRACT §20: "If the grace (24 hours, or a tenth of the new certificate's lifetime when that is
 * shorter) passes from `seenAt` while an answering endpoint still serves an older leaf, one
 * `certificate.not_deployed` (`data: { deployment, lagging: [addresses] }`) per certificate and
 * issuance, under both policies."
 * CONTRACT §9: "an event is delivered once per channel".
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DAY } from "../core/base/time.ts";
import { chainPem, createIntermediateCa, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe } from "./support/cli.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { logListJson, startFixtureLog } from "./support/ct_log_server.ts";
import { issueThroughCt } from "./support/ct_certs.ts";
import { until as waitUntil } from "./support/until.ts";
import { seedOwner } from "./support/accounts.ts";

setDefaultTimeout(240_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-scale-deploy-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** Following, polling and the grace take this long at most under load: 90 s. */
const until = <T>(what: string, check: () => Promise<T | null | undefined | false>, timeoutMs = 90_000) => waitUntil(what, check, timeoutMs);

describe("an issuance not deployed, with two processes following, polling and checking", () => {
  test("one certificate.not_deployed per certificate and issuance, delivered once", async () => {
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const ctCa = await createIntermediateCa(root, { name: "CN=E8, O=Let's Encrypt, C=US" });
    const log = await startFixtureLog({ kind: "rfc6962" });
    cleanups.push(() => log.close());
    log.publish();
    const listFile = join(dir, "list.json");
    writeFileSync(listFile, logListJson([log]));
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const receiver = await startHttpReceiver();
    cleanups.push(() => receiver.close());

    const { key } = await seedOwner(sqld.url, { name: "Deployment race", plan: "enterprise", limits: { requestsPerMinute: 100_000 } });

    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_TLS_TIMEOUT: "2s",
      CERTKEEPER_REVOCATION: "off",
      CERTKEEPER_DNS_SERVERS: "off",
      CERTKEEPER_ARI: "off",
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: listFile,
      CERTKEEPER_CT_INTERVAL: "1s",
      CERTKEEPER_CHECK_INTERVAL: "2s",
      CERTKEEPER_DELIVERY_RETRY: "300ms,1s",
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    expect((await callServe(a, key, "POST", "/v1/channels", { type: "webhook", name: "hook", config: { url: `${receiver.url}/hook` } })).status).toBe(201);
    await until("the log followed", async () => {
      const logs = (await callServe(b, key, "GET", "/v1/ct/logs")).body.data;
      return logs.length === 1 && logs[0].position === 0;
    });

    // Certificates served with a leaf issued ten days ago, watched through their parent name.
    const COUNT = 3;
    const domains = Array.from({ length: COUNT }, (_, i) => `deploy-race${i}.${TEST_DOMAIN}`);
    const ids: string[] = [];
    for (const [i, domain] of domains.entries()) {
      const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
      const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
      cleanups.push(() => server.close());
      const added = await callServe(i % 2 ? b : a, key, "POST", "/v1/certificates", { domain, port: server.port });
      expect(added.status).toBe(201);
      ids.push(added.body.data.id);
    }
    expect((await callServe(b, key, "POST", "/v1/watches", { domain: TEST_DOMAIN })).status).toBe(201);
    const watchedSince = Date.now();

    // Checks through both processes at once, again and again, while the issuances are recorded,
    // noted and their grace runs out.
    let hammering = true;
    const hammer = (async () => {
      while (hammering) {
        await Promise.all(ids.flatMap((id) => [a, b].map((server) => callServe(server, key, "POST", `/v1/certificates/${id}/check`).catch(() => null))));
      }
    })();

    // New certificates for exactly those names, issued now, living 200 s: a grace of 20 s.
    for (const domain of domains) {
      await issueThroughCt({ issuer: ctCa, dnsNames: [domain], logs: [log], notBefore: new Date(Date.now() - 1000), daysLeft: 200 / 86_400, timestamp: Math.max(watchedSince, Date.now()) });
    }
    log.publish();
    await until("every issuance pending", async () => {
      for (const id of ids) if ((await callServe(a, key, "GET", `/v1/certificates/${id}`)).body.data.deployment === null) return false;
      return true;
    });
    const notDeployed = async () =>
      (await callServe(a, key, "GET", "/v1/events?limit=100")).body.data.filter((event: any) => event.type === "certificate.not_deployed");
    await until("every certificate's not_deployed", async () => (await notDeployed()).length >= COUNT, 120_000);
    // A few more rounds of checks through both processes after the last announcement.
    const more = Date.now() + 3_000;
    while (Date.now() < more) await Bun.sleep(100);
    hammering = false;
    await hammer;

    const events = await until("the not_deployed events delivered", async () => {
      const list = await notDeployed();
      return list.every((event: any) => event.deliveries.every((d: any) => d.status === "delivered")) ? list : null;
    });
    expect(events.map((event: any) => event.certificateId).sort()).toEqual([...ids].sort());
    expect(events.every((event: any) => event.data.lagging.length === 1)).toBe(true);
    const hooks = receiver.requests.filter((r) => r.path === "/hook" && r.json?.type === "certificate.not_deployed");
    expect(hooks.map((r) => r.json.data.certificate.id).sort()).toEqual([...ids].sort());
    // One certificate.issued per issuance, too.
    const issued = (await callServe(b, key, "GET", "/v1/events?limit=100")).body.data.filter((event: any) => event.type === "certificate.issued");
    expect(issued.map((event: any) => event.data.dnsNames[0]).sort()).toEqual([...domains].sort());
  });
});
