/**
 * Following the CT logs directly (CONTRACT §21), as a user sees it through the API: an RFC 6962 log and
 * a static-ct-api tile log, both followed from their size when first seen; every new entry's names
 * matched against every watch; one certificate.issued per issuance and watch, however many logs and
 * whether its precertificate, its certificate or both were seen, with §15's data; subdomains,
 * allowedIssuers and autoMonitor as §15.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { CtReadThread } from "../adapters/ct_threads/mod.ts";
import { createLogger } from "../core/base/log.ts";
import { threadsNamed, threadsNamedSoon } from "./support/threads.ts";

const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const colonHex = (hex: string) => hex.toUpperCase().match(/../g)!.join(":");
const sha256Hex = (der: ArrayBuffer) => new Bun.CryptoHasher("sha256").update(new Uint8Array(der)).digest("hex");

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("following an RFC 6962 log and a tile log", () => {
  test("a log first seen is followed from its size: what it held before raises nothing, what comes after does", async () => {
    const lines: string[] = [];
    world = await startCtWorld({ start: false, logger: createLogger("info", (line) => lines.push(line)) });
    const w = world;
    const watch = await w.addWatch({ domain: "before.example" });
    await w.issue({ dnsNames: ["old.before.example"], certificateIn: w.logs });
    w.publishAll();
    w.start();
    const shown = await w.caughtUp(2);
    expect(shown).toEqual([
      { url: w.logs[0]!.url, kind: "rfc6962", treeSize: 2, position: 2, lastError: null, updatedAt: expect.stringMatching(iso) },
      { url: w.logs[1]!.url, kind: "tiled", treeSize: 2, position: 2, lastError: null, updatedAt: expect.stringMatching(iso) },
    ].sort((a, b) => (a.url < b.url ? -1 : 1)));
    expect(await w.issued()).toEqual([]);

    const fresh = await w.issue({ dnsNames: ["new.before.example"] });
    w.publishAll();
    await w.caughtUp(3);
    const events = await w.until("the new issuance's event", async () => ((await w.issued()).length > 0 ? w.issued() : null));
    expect(events).toEqual([
      {
        id: expect.stringMatching(/^evt_/),
        type: "certificate.issued",
        createdAt: expect.stringMatching(iso),
        certificateId: null,
        data: {
          watchId: watch.id,
          domain: "before.example",
          dnsNames: ["new.before.example"],
          issuer: "Let's Encrypt",
          notBefore: fresh.certificate.notBefore.toISOString(),
          notAfter: fresh.certificate.notAfter.toISOString(),
          fingerprintSha256: null,
          authorizedIssuer: null,
        },
        deliveries: [],
      },
    ]);
    // Logged as every event raised is (CONTRACT §23), once.
    const raised = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === "event raised" || entry.message === "event raised");
    expect(raised.map((entry) => [entry.type, entry.eventId, entry.watchId, entry.domain])).toEqual([["certificate.issued", events[0]!.id, watch.id, "before.example"]]);
  });

  test("a precertificate and its certificate, in two logs each, are one issuance: one event per watch, the certificate's fingerprint when seen first", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const mine = await w.addWatch({ domain: "pair.example" });
    const elsewhere = await w.harness.core.services.admin.createOrganization({ name: "Elsewhere", plan: "enterprise" });
    const other = await w.harness.makeKey("owner", "live", elsewhere.id);
    const theirs = await w.addWatch({ domain: "pair.example" }, other);
    // Precertificate in both logs, then (later) the certificate in both.
    const pair = await w.issue({ dnsNames: ["pair.example", "www.pair.example"] });
    w.publishAll();
    await w.caughtUp(1);
    for (const log of w.logs) log.logCertificate(pair.certificate.rawData, pair.chain);
    // A certificate logged without its precertificate: its event carries its fingerprint.
    const direct = await w.issue({ dnsNames: ["direct.pair.example"], logs: [], certificateIn: [w.logs[1]!] });
    w.publishAll();
    await w.caughtUp();
    const mineEvents = await w.until("two events", async () => {
      const events = await w.issued();
      return events.length >= 2 ? events : null;
    });
    expect(mineEvents.map((event) => [event.data.watchId, event.data.dnsNames, event.data.fingerprintSha256])).toEqual([
      [mine.id, ["pair.example", "www.pair.example"], null],
      [mine.id, ["direct.pair.example"], colonHex(sha256Hex(direct.certificate.rawData))],
    ]);
    const theirEvents = await w.issued(other);
    expect(theirEvents.map((event) => [event.data.watchId, event.data.dnsNames])).toEqual([
      [theirs.id, ["pair.example", "www.pair.example"]],
      [theirs.id, ["direct.pair.example"]],
    ]);
    const watch = expectData(await w.harness.request("GET", `/v1/watches/${mine.id}`), 200);
    expect(watch.issuancesSeen).toBe(2);
  });

  test("subdomains match only watches that include them; a wildcard is a name under its domain", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const tree = await w.addWatch({ domain: "tree.example" });
    const exact = await w.addWatch({ domain: "exact.tree.example", includeSubdomains: false });
    await w.issue({ dnsNames: ["*.tree.example"] });
    await w.issue({ dnsNames: ["a.exact.tree.example"] });
    await w.issue({ dnsNames: ["exact.tree.example"] });
    await w.issue({ dnsNames: ["tree.example.attacker.test", "nottree.example"] });
    w.publishAll();
    await w.caughtUp(4);
    const events = await w.until("four events", async () => {
      const list = await w.issued();
      return list.length >= 4 ? list : null;
    });
    // Each issuance raises one event per matching watch (the two of one issuance in no set order).
    const order = (pairs: string[][]) => pairs.sort((a, b) => (a.join() < b.join() ? -1 : 1));
    expect(order(events.map((event) => [event.data.dnsNames[0], event.data.watchId]))).toEqual(
      order([
        ["*.tree.example", tree.id],
        ["a.exact.tree.example", tree.id],
        ["exact.tree.example", tree.id],
        ["exact.tree.example", exact.id],
      ]),
    );
  });

  test("an entry logged before its watch was created is recorded, counted, and raises nothing", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const watch = await w.addWatch({ domain: "late.example" });
    await w.issue({ dnsNames: ["late.example"], timestamp: Date.parse(watch.createdAt) - 60_000 });
    w.publishAll();
    await w.caughtUp(1);
    const shown = await w.until("the issuance counted", async () => {
      const current = expectData(await w.harness.request("GET", `/v1/watches/${watch.id}`), 200);
      return current.issuancesSeen === 1 ? current : null;
    });
    expect(shown.issuancesSeen).toBe(1);
    expect(await w.issued()).toEqual([]);
  });

  test("allowedIssuers: authorizedIssuer compares the issuer's O and CN, ignoring case", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "ok.example", allowedIssuers: ["let's encrypt"] });
    await w.addWatch({ domain: "cn.example", allowedIssuers: ["E7"] });
    await w.addWatch({ domain: "no.example", allowedIssuers: ["DigiCert Inc"] });
    for (const name of ["ok.example", "cn.example", "no.example"]) await w.issue({ dnsNames: [name] });
    w.publishAll();
    await w.caughtUp(3);
    const events = await w.until("three events", async () => {
      const list = await w.issued();
      return list.length >= 3 ? list : null;
    });
    expect(events.map((event) => [event.data.domain, event.data.issuer, event.data.authorizedIssuer])).toEqual([
      ["ok.example", "Let's Encrypt", true],
      ["cn.example", "Let's Encrypt", true],
      ["no.example", "Let's Encrypt", false],
    ]);
  });

  test("autoMonitor tries to monitor each currently valid name under the domain (wildcards skipped), and says why one failed", async () => {
    world = await startCtWorld({ config: { ctIntervalMs: 3_600_000 } });
    const w = world;
    await w.caughtUp(0);
    const domain = `auto.${TEST_DOMAIN}`;
    const watch = await w.addWatch({ domain, autoMonitor: true });
    await w.issue({ dnsNames: [`*.${domain}`, `www.${domain}`, "elsewhere.example"] });
    w.publishAll();
    const shown = await w.until("autoMonitor's attempt", async () => {
      const current = expectData(await w.harness.request("GET", `/v1/watches/${watch.id}`), 200);
      return current.lastError ? current : null;
    });
    // Port 443 of 127.0.0.1 has no test server: the add is tried, fails, and waits for the next poll.
    expect(shown.lastError).toMatch(new RegExp(`^Could not monitor "www\\.auto\\.${TEST_DOMAIN.replace(".", "\\.")}": No TLS certificate could be retrieved`));
    expect(shown.issuancesSeen).toBe(1);
    expect(shown.lastPolledAt).toMatch(iso);
  });

  test("the follower reads an HTTPS log trusted through the extra CA, and certkeeper_ct_entries_total counts what it read", async () => {
    const { testPki } = await import("./support/harness.ts");
    const { createLeaf, chainPem } = await import("./support/pki.ts");
    const { rsaIntermediate } = await testPki();
    const serverCert = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`ct.${TEST_DOMAIN}`] });
    world = await startCtWorld({
      logs: [{ kind: "tiled", tls: { cert: chainPem(serverCert, rsaIntermediate), key: serverCert.keyPem, host: `ct.${TEST_DOMAIN}` } }],
      config: { metricsToken: "metrics-secret" },
    });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "secure.example" });
    await w.issue({ dnsNames: ["secure.example"], certificateIn: w.logs });
    w.publishAll();
    await w.caughtUp(2);
    expect((await w.until("one event", async () => ((await w.issued()).length === 1 ? w.issued() : null))).length).toBe(1);
    const metrics = await (await w.harness.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer metrics-secret" } }))).text();
    expect(metrics).toContain(`certkeeper_ct_entries_total{log="${w.logs[0]!.url}"} 2`);
    expect(metrics).toContain(`certkeeper_ct_backlog_entries{log="${w.logs[0]!.url}"} 0`);
  });

  test("reading on a thread of its own gives the same events; a thread that dies costs a retry, not an entry", async () => {
    const { createHttpFetcher } = await import("../adapters/notify/mod.ts");
    const { TrustStore } = await import("../core/tls/trust_store.ts");
    const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
    const options = { extraCaFile: undefined, resolve: [], fetcher };
    const threads = [new CtReadThread(options), new CtReadThread({ ...options, script: new URL("./support/ct_crashing_thread.ts", import.meta.url), restartAfterMs: 60_000 })];
    try {
      for (const thread of threads) {
        const threadsBefore = threadsNamed("ck-ct");
        world = await startCtWorld({ ctEntryReader: thread });
        const w = world;
        await w.caughtUp(0);
        // The thread runs from the moment logs are followed, before their first entries.
        if (thread === threads[0] && threadsBefore !== null) expect(await threadsNamedSoon("ck-ct", threadsBefore + 1)).toBe(threadsBefore + 1);
        await w.addWatch({ domain: "thread.example" });
        await w.issue({ dnsNames: ["thread.example"], certificateIn: w.logs });
        await w.issue({ dnsNames: ["other.example"], certificateIn: w.logs });
        w.publishAll();
        await w.caughtUp(4);
        const events = await w.until("one event", async () => ((await w.issued()).length >= 1 ? w.issued() : null));
        expect(events.map((event) => event.data.dnsNames)).toEqual([["thread.example"]]);
        await w.close();
        world = undefined;
      }
    } finally {
      for (const thread of threads) await thread.close();
      await fetcher.close();
    }
  });
});

describe("issuances read from the logs", () => {
  test("an issuance of exactly a monitored certificate's names is its pending deployment, noted as soon as the follower records it", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const { rsaIntermediate } = await testPki();
    const domain = `deploy.${TEST_DOMAIN}`;
    const now = Date.now();
    const served = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 30 * DAY), notAfter: new Date(now + 60 * DAY) });
    const server = await startTlsServer({ cert: chainPem(served, rsaIntermediate), key: served.keyPem });
    try {
      const certificate = expectData(await w.harness.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
      await w.addWatch({ domain, includeSubdomains: false });
      // Let the watch's first poll happen before the issuance, as with a watch made long ago.
      await w.until("the watch's first poll", async () => (expectData(await w.harness.request("GET", "/v1/watches"), 200) as any[])[0].lastPolledAt);
      const fresh = await w.issue({ dnsNames: [domain] });
      w.publishAll();
      await w.caughtUp();
      const deployment = await w.until("the pending deployment", async () => expectData(await w.harness.request("GET", `/v1/certificates/${certificate.id}`), 200).deployment);
      expect(deployment).toEqual({
        issuedAt: fresh.certificate.notBefore.toISOString(),
        fingerprintSha256: null,
        notAfter: fresh.certificate.notAfter.toISOString(),
        issuer: "Let's Encrypt",
        seenAt: expect.stringMatching(iso),
        servedBy: 0,
        endpoints: 1,
      });
    } finally {
      await server.close();
    }
  });
});
