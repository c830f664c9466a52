/**
 * Under CERTKEEPER_CT_SOURCE=logs the follower records issuances, and the watch poller reads them back
 * to note pending deployments and add autoMonitor's names. The follower's commit moves the watch's
 * next poll forward only when no poll holds it (adapters/sql/ct_logs.ts: `CASE WHEN lease_owner IS
 * NULL`). An issuance recorded while a poll is under way (here: while it adds an autoMonitor name that
 * is slow to answer) is read by the poll that follows at once (the poll's end finds the watch's
 * issuancesSeen moved past what it knew, and makes the next poll due), not a whole
 * CERTKEEPER_CT_INTERVAL later: the monitored certificate's
 * pending deployment, and so certificate.not_deployed, are not an hour late.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import net from "node:net";
import { DAY, HOUR } from "../core/base/time.ts";
import { startCtWorld } from "./support/ct_world.ts";
import { expectData, testPki } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";

setDefaultTimeout(60_000);

const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

describe("an issuance recorded while the watch is being polled", () => {
  test("is noted as the monitored certificate's pending deployment soon after, not a CT interval later", async () => {
    // A host that accepts connections and never answers: adding it takes the whole TLS time limit.
    const silentHost = "127.0.0.77";
    const sockets = new Set<net.Socket>();
    let accepted = 0;
    const silent = net.createServer((socket) => {
      accepted++;
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve, reject) => {
      silent.once("error", reject);
      silent.listen(443, silentHost, () => resolve());
    });
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          for (const socket of sockets) socket.destroy();
          silent.close(() => resolve());
        }),
    );

    const world = await startCtWorld({
      config: {
        ctIntervalMs: HOUR,
        tlsTimeoutMs: 3_000,
        resolve: [
          { pattern: "slow.auto.certkeeper.test", address: silentHost, addresses: [silentHost] },
          { pattern: "*.certkeeper.test", address: "127.0.0.1", addresses: ["127.0.0.1"] },
        ] as never,
      },
    });
    cleanups.push(() => world.close());
    await world.caughtUp(0);
    const { harness: h } = world;

    // app.auto.certkeeper.test is monitored; its certificate will be renewed (and not deployed).
    const { rsaIntermediate } = await testPki();
    const app = "app.auto.certkeeper.test";
    const served = await createLeaf({ issuer: rsaIntermediate, dnsNames: [app], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
    const server = await startTlsServer({ cert: chainPem(served, rsaIntermediate), key: served.keyPem });
    cleanups.push(() => server.close());
    const certificate = expectData(await h.request("POST", "/v1/certificates", { body: { domain: app, port: server.port } }), 201);

    const watch = await world.addWatch({ domain: "auto.certkeeper.test", autoMonitor: true });
    await world.until("the first poll", async () => expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).lastPolledAt !== null);

    // An issuance for a name that is slow to add: the poll that reads it spends 3 s adding it.
    await world.issue({ dnsNames: ["slow.auto.certkeeper.test"] });
    world.publishAll();
    await world.until("the slow name being added", async () => accepted > 0);

    // Meanwhile, the renewal of app.auto.certkeeper.test is logged and recorded by the follower.
    await world.issue({ dnsNames: [app], notBefore: new Date(Date.now() - 1_000) });
    world.publishAll();
    await world.until("both issuances recorded", async () => expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).issuancesSeen === 2);
    const recordedAt = Date.now();

    // The watch recorded it: the certificate shows it pending within seconds (the slow add ends 3 s in).
    const deployment = await world
      .until("the pending deployment", async () => expectData(await h.request("GET", `/v1/certificates/${certificate.id}`), 200).deployment, 10_000)
      .catch(() => null);
    expect(deployment).not.toBeNull();
    expect(Date.parse(deployment.seenAt) - recordedAt).toBeLessThan(5_000);
  });
});
