/**
 * Switching CERTKEEPER_CT_SOURCE back and forth announces an issuance once per watch: an installation
 * that followed the logs, then used the search service for a while, then follows the logs again from
 * the positions it left does not announce again what the search service announced meanwhile (the
 * search poll records each issuance under the service's tbs_sha256, the key the follower records its
 * own under).
 */
import { afterEach, expect, test } from "bun:test";
import { createHarness, expectData, testPki, type Harness } from "./support/harness.ts";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { createTransports, type ClosableTransports } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

let world: CtWorld | undefined;
let ct: CtServer | undefined;
const others: Array<{ harness: Harness; transports: ClosableTransports }> = [];
afterEach(async () => {
  for (const { harness, transports } of others.splice(0)) {
    await harness.core.stop();
    await transports.close();
  }
  await ct?.close();
  ct = undefined;
  await world?.close();
  world = undefined;
});

test("logs → search → logs: an issuance announced by the search service is not announced again by the follower", async () => {
  const { root } = await testPki();
  world = await startCtWorld({ store: "libsql" });
  const w = world;
  await w.caughtUp(0);
  const watch = await w.addWatch({ domain: "flip.example" });
  const owner = w.harness.keys.owner.key;
  // The watch's first poll (under the logs) is done before the switch.
  await w.until("the watch's first poll", async () => expectData(await w.harness.request("GET", `/v1/watches/${watch.id}`), 200).lastPolledAt);
  await w.harness.core.stop();

  // CERTKEEPER_CT_SOURCE=search on the same database.
  ct = await startCtServer();
  const searchConfig = { ...w.harness.config, ctSource: "search" as const, ctUrl: ct.url, ctIntervalMs: 3_600_000 };
  const searchTransports = createTransports(searchConfig, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-ct-switch-outbox" });
  const searching = await createHarness({ store: w.harness.store, transports: searchTransports, config: searchConfig });
  others.push({ harness: searching, transports: searchTransports });
  searching.core.start();
  const polled = async (after: string | null) =>
    searching.request("POST", `/v1/watches/${watch.id}/poll`, { key: owner }).then(() =>
      w.until("a poll", async () => {
        const current = expectData(await searching.request("GET", `/v1/watches/${watch.id}`, { key: owner }), 200);
        return current.lastPolledAt !== after ? current.lastPolledAt : null;
      }),
    );
  // The first poll after the switch is the search service's silent baseline (nothing there yet).
  const first = await polled(expectData(await searching.request("GET", `/v1/watches/${watch.id}`, { key: owner }), 200).lastPolledAt);
  // A certificate is issued (logged in the CT logs, found by the search service) and announced.
  const issued = await w.issue({ dnsNames: ["y.flip.example"] });
  w.publishAll();
  ct.log(issued.leaf, w.ca);
  await polled(first);
  const announced = await w.until("the search service's event", async () => {
    const events = await w.issued();
    return events.length > 0 ? events : null;
  });
  expect(announced.map((event) => event.data.dnsNames)).toEqual([["y.flip.example"]]);
  await searching.core.stop();

  // CERTKEEPER_CT_SOURCE=logs again.
  const logsConfig = { ...w.harness.config };
  const logsTransports = createTransports(logsConfig, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-ct-switch-outbox" });
  const following = await createHarness({
    store: w.harness.store,
    transports: logsTransports,
    config: logsConfig,
    ctFollower: { leaseMs: 3000, headIntervalMs: 100, watchSettleMs: 50, firstBackoffMs: 100 },
  });
  others.push({ harness: following, transports: logsTransports });
  following.core.start();
  await w.until("the logs read again", async () => {
    const logs = expectData(await following.request("GET", "/v1/ct/logs", { key: owner }), 200) as any[];
    return logs.length === 2 && logs.every((log) => log.position === 1) ? logs : null;
  });
  await Bun.sleep(500);
  const events = await w.issued();
  expect(events.map((event) => event.data.dnsNames)).toEqual([["y.flip.example"]]);
}, 30_000);
