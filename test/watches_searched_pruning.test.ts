/**
 * With CERTKEEPER_CT_SOURCE=search, the issuances the search polls record for a watch are forgotten as
 * the follower's are: event retention, which every process runs, prunes those of deleted watches and of
 * certificates expired longer ago than CERTKEEPER_EVENT_RETENTION, whichever source recorded them.
 */
import { afterEach, expect, test } from "bun:test";
import { createHarness, expectData, testPki, type Harness } from "./support/harness.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { createIntermediateCa, createLeaf } from "./support/pki.ts";
import { createTransports, type ClosableTransports } from "../adapters/notify/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

let harness: Harness | undefined;
let transports: ClosableTransports | undefined;
let ct: CtServer | undefined;
afterEach(async () => {
  await harness?.close();
  await transports?.close();
  await ct?.close();
  harness = undefined;
  transports = undefined;
  ct = undefined;
});

test("search source: the issuances a deleted watch's polls recorded are forgotten (as with the logs source)", async () => {
  const { root } = await testPki();
  const ca = await createIntermediateCa({ cert: root.cert, keys: root.keys, certPem: root.certPem, keyPem: "" } as never, { name: "CN=R11, O=Let's Encrypt, C=US" });
  ct = await startCtServer();
  const config = { ctSource: "search" as const, ctUrl: ct.url, ctIntervalMs: 3_600_000, allowPrivateTargets: true, resolve: [], eventRetentionMs: 1000 } as const;
  transports = createTransports(config as never, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-searched-prune-outbox" });
  harness = await createHarness({ store: "libsql", transports, config: config as never });
  const h = harness;
  h.core.start();

  for (let i = 0; i < 3; i++) ct.log(await createLeaf({ dnsNames: [`n${i}.prune.example`], issuer: ca, daysLeft: -1 }), ca);
  const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain: "prune.example" } }), 201);
  const deadline = Date.now() + 10_000;
  while (!expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200).lastPolledAt) {
    if (Date.now() > deadline) throw new Error("no poll");
    await Bun.sleep(50);
  }
  // The search poll recorded them (the precondition of the defect).
  expect((await h.store.ctLogs.issuances(watch.id, 0, 100)).length).toBe(3);

  expect((await h.request("DELETE", `/v1/watches/${watch.id}`)).status).toBe(200);
  // Whatever a search-source process runs to forget old records (retention), run now and given time.
  await h.core.services.retention.runOnce();
  await Bun.sleep(1500);
  await h.core.services.retention.runOnce();
  expect((await h.store.ctLogs.issuances(watch.id, 0, 100)).length).toBe(0);
}, 30_000);
