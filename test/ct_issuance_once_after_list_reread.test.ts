/**
 * One certificate.issued per issuance per watch (CONTRACT §21), however much later its certificate is
 * logged after its precertificate: the follower forgets recorded issuances only once their certificate
 * has long expired (at each reading of the list), never a certificate still valid.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { expectData } from "./support/harness.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("the certificate logged after the list was read again (and old issuances forgotten) raises no second event", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }], ctFollower: { listIntervalMs: 100 } });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  const watch = await w.addWatch({ domain: "later.example" });
  const pair = await w.issue({ dnsNames: ["later.example"] });
  w.publishAll();
  await w.caughtUp(1);
  await w.until("the precertificate's event", async () => ((await w.issued()).length === 1 ? true : null));
  // The list is read again a few times meanwhile (every 100 ms here), forgetting what is old.
  await Bun.sleep(500);
  log.logCertificate(pair.certificate.rawData, pair.chain);
  log.publish();
  await w.caughtUp(2);
  await Bun.sleep(300);
  const events = await w.issued();
  expect(events.map((event) => [event.data.watchId, event.data.dnsNames])).toEqual([[watch.id, ["later.example"]]]);
  expect(expectData(await w.harness.request("GET", `/v1/watches/${watch.id}`), 200).issuancesSeen).toBe(1);
});
