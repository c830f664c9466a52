/**
 * A watch's poll in flight when the wall clock is set back a day: the clock-step pull forward leaves the
 * watches this process is polling alone (their lease, taken on the clock ahead, ends later than any
 * planned poll, and their last poll was in the future), so the same process does not claim the watch
 * again and poll it beside itself; the poll's save plans the next on the new clock. One
 * certificate.issued for the one issuance. Real CT service over HTTP; the first page request is held
 * while the clock is set back.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { CtClient, WatchPoller } from "../core/watches/mod.ts";
import type { Scope } from "../core/base/records.ts";
import { createLogger } from "../core/base/log.ts";
import { DAY, HOUR, MINUTE } from "../core/base/time.ts";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { watchRecord } from "./support/store_conformance/watches.ts";
import { SteppingClock } from "./support/fake_clock.ts";

let ct: CtServer;
let ca: Issued;
const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
beforeAll(async () => {
  ca = await createIntermediateCa(await createRootCa(), { name: "CN=R11, O=Let's Encrypt, C=US" });
  ct = await startCtServer();
});
afterAll(async () => {
  await ct.close();
  await fetcher.close();
});

test("a poll in flight when the clock is set back a day is not run a second time beside itself (one certificate.issued)", async () => {
  const clock = new SteppingClock(Date.now());
  const store = createMemoryStore();
  const org = organizationRecord();
  await store.organizations.create(org);
  const scope: Scope = { organizationId: org.id, mode: "live" };
  const domain = `dup${Math.random().toString(36).slice(2, 8)}.test`;
  ct.log(await createLeaf({ issuer: ca, dnsNames: [domain], daysLeft: 60 }), ca);
  // Polled an hour ago on this (ahead) clock; due now; its baseline done.
  const watch = watchRecord(scope, { domain, baselineDone: true, lastPolledAt: clock.now() - HOUR, nextPollAt: clock.now() - 1000, createdAt: clock.now() - DAY });
  expect(await store.watches.insert(watch, { limit: 10 })).toBe("created");

  const real = new CtClient({ fetcher, baseUrl: ct.url, timeoutMs: 5_000 });
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  let held = false;
  const client = {
    page: async (query: Parameters<CtClient["page"]>[0]) => {
      if (calls++ === 0) {
        held = true;
        await gate; // the poll's first page is in flight across the step
      }
      return real.page(query);
    },
  } as unknown as CtClient;
  const polls: string[] = [];
  const poller = new WatchPoller({
    store,
    clock,
    logger: createLogger("error"),
    client,
    intervalMs: HOUR,
    owner: "proc_a",
    leaseMs: 5 * MINUTE,
    pollMs: MINUTE,
    addCertificate: async () => true,
    onPoll: (result) => polls.push(result),
  });
  poller.loop.start();
  for (let i = 0; i < 400 && !held; i++) await Bun.sleep(5);
  expect(held).toBe(true);

  clock.step(-DAY);
  for (let i = 0; i < 5; i++) {
    clock.advance(MINUTE);
    await Bun.sleep(20);
  }
  // Minutes pass on the corrected clock: the loop looks at the store again, and polls nothing beside the held poll.
  await Bun.sleep(300);
  expect(calls).toBe(1);
  release();
  for (let i = 0; i < 400 && polls.length < 1; i++) await Bun.sleep(5);
  await poller.loop.stop();
  expect(polls).toEqual(["ok"]);
  // Its save planned the next poll on the corrected clock, an interval on.
  expect((await store.watches.get(scope, watch.id))!.nextPollAt).toBeLessThanOrEqual(clock.now() + HOUR);
  const issued = (await store.events.list(scope, { limit: 100 })).filter((e) => e.type === "certificate.issued");
  expect(issued.length).toBe(1);
}, 20_000);
