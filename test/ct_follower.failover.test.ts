/**
 * One follower per installation, and nothing lost or repeated (CONTRACT §21, §9): two `serve` processes
 * on one libSQL server follow the logs through one lease; the holder killed outright in the middle of a
 * long backlog is taken over by the other, which goes on from the last position written; a process
 * started after both raises nothing again; a log's Retry-After is waited out by the process taking
 * over. In-process, a stopped and restarted core goes on where it stopped, and a list that changes
 * while a run is being written is followed on from that run.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { createCore } from "../core/app/create_core.ts";
import { silentLogger } from "../core/base/log.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe, type ServeProcess } from "./support/cli.ts";
import { logListJson, startFixtureLog, type FixtureLog } from "./support/ct_log_server.ts";
import { issueThroughCt } from "./support/ct_certs.ts";
import { testPki } from "./support/harness.ts";
import { createIntermediateCa } from "./support/pki.ts";
import { startCtWorld } from "./support/ct_world.ts";
import { until } from "./support/until.ts";

// Processes, a libSQL server, and a backlog read through slow logs.
setDefaultTimeout(120_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-ct-failover-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});


/** How long after an entry's timestamp a `serve` process's follower waits before matching it against the watches (its default). */
const WATCH_SETTLE_MS = 5_000;

const following = (server: ServeProcess) => server.output().stdout.includes("following the CT logs in this process");

describe("two server processes on one libSQL server", () => {
  test("one follows; killed mid-backlog, the other takes over from the last position written: every issuance once", async () => {
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const { root } = await testPki();
    const ca = await createIntermediateCa(root, { name: "CN=E8, O=Let's Encrypt, C=US" });
    const logs: FixtureLog[] = [await startFixtureLog({ kind: "rfc6962", batchLimit: 256 }), await startFixtureLog({ kind: "tiled" })];
    for (const log of logs) {
      log.publish();
      cleanups.push(() => log.close());
    }
    const listFile = join(dir, "list.json");
    writeFileSync(listFile, logListJson(logs));

    const setup = await openLibsqlStore({ url: sqld.url });
    const admin = new Admin(setup, systemClock);
    const org = await admin.createOrganization({ name: "Failover", plan: "enterprise" });
    const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
    const key = (await admin.createApiKey({ userId: user.id, name: "failover", mode: "live" })).key;
    await setup.close();

    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: listFile,
      CERTKEEPER_CT_INTERVAL: "1s",
      CERTKEEPER_TLS_TIMEOUT: "1s",
      CERTKEEPER_LOG_LEVEL: "info",
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const watch = (await callServe(a, key, "POST", "/v1/watches", { domain: "failover.example" })).body.data;
    expect(watch.id).toMatch(/^wch_/);
    // The watch's createdAt was taken before its answer: entries logged from now on are matched against it.
    const watchedSince = Date.now();
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    await until("both logs first seen", async () => {
      const shown = (await callServe(b, key, "GET", "/v1/ct/logs")).body.data;
      return shown.length === 2 && shown.every((log: any) => log.position === 0);
    });
    expect([following(a), following(b)].filter(Boolean).length).toBe(1);

    // A backlog of three runs in each log, with watched issuances spread through it, served slowly.
    // Its entries are stamped when the watch was made, the earliest a watched issuance can be: a
    // follower reads watches WATCH_SETTLE_MS after an entry's timestamp before matching it, and entries
    // stamped as they are logged would hold the first run back that long after the backlog is built.
    const timestamp = watchedSince;
    const filler = await issueThroughCt({ issuer: ca, dnsNames: ["filler.other.example"], logs: [] });
    const expected: string[] = [];
    for (let i = 0; i < 12_000; i++) {
      if (i % 1000 === 500) {
        const name = `n${i}.failover.example`;
        const issued = await issueThroughCt({ issuer: ca, dnsNames: [name], logs, timestamp });
        if (i % 2000 === 500) logs[0]!.logCertificate(issued.certificate.rawData, issued.chain, { timestamp });
        expected.push(name);
      }
      for (const log of logs) log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp });
    }
    for (const log of logs) {
      log.delayMs = 40;
      log.publish();
    }
    const size = logs[0]!.head.size;
    const [holder, other] = following(a) ? [a, b] : [b, a];
    await until("a run written", async () => {
      const shown = (await callServe(other, key, "GET", "/v1/ct/logs")).body.data;
      return shown.some((log: any) => log.position > 0 && log.position < log.treeSize);
    });
    expect(await holder.stop("SIGKILL")).not.toBe(0);
    const atKill = (await callServe(other, key, "GET", "/v1/ct/logs")).body.data;
    expect(atKill.some((log: any) => log.position < size)).toBe(true);

    await until("the other process following", async () => following(other));
    for (const log of logs) log.delayMs = 0;
    await until("the backlog read", async () => {
      const shown = (await callServe(other, key, "GET", "/v1/ct/logs")).body.data;
      return shown.every((log: any) => log.position === log.treeSize && log.treeSize > 10_000);
    });
    const names = async (server: ServeProcess) =>
      (await callServe(server, key, "GET", "/v1/events?limit=100")).body.data
        .filter((event: any) => event.type === "certificate.issued")
        .map((event: any) => event.data.dnsNames[0])
        .sort();
    const raised = await until("every event", async () => {
      const list = await names(other);
      return list.length >= expected.length ? list : null;
    });
    expect(raised).toEqual([...expected].sort());
    expect((await callServe(other, key, "GET", `/v1/watches/${watch.id}`)).body.data.issuancesSeen).toBe(expected.length);

    // Another process started afterwards raises nothing again, and the next issuance once.
    expect(await other.stop("SIGKILL")).not.toBe(0);
    const c = await startServe({ env });
    cleanups.push(() => c.stop("SIGKILL"));
    await until("the new process following", async () => following(c));
    // Logged a settle's time ago (long after the watch was made): matched at the next head, not WATCH_SETTLE_MS later.
    await issueThroughCt({ issuer: ca, dnsNames: ["last.failover.example"], logs, timestamp: Math.max(watchedSince, Date.now() - WATCH_SETTLE_MS) });
    for (const log of logs) log.publish();
    const final = await until("the last event", async () => {
      const list = await names(c);
      return list.includes("last.failover.example") ? list : null;
    });
    expect(final).toEqual([...expected, "last.failover.example"].sort());
    expect(await c.stop()).toBe(0);
  });
});

describe("a server process stopped while a log hangs", () => {
  test("exits 0 on SIGTERM at once, without waiting out the hanging request", async () => {
    const log = await startFixtureLog({ kind: "rfc6962" });
    cleanups.push(() => log.close());
    log.publish();
    const listFile = join(dir, "hanging.json");
    writeFileSync(listFile, logListJson([log]));
    const env = {
      CERTKEEPER_DATABASE_URL: `file:${join(dir, "hanging.db")}`,
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: listFile,
      CERTKEEPER_CT_INTERVAL: "1s",
      // A request may take a minute here: a stop that waited for one would be killed by stop()'s 5 s.
      CERTKEEPER_TLS_TIMEOUT: "20s",
    };
    const server = await startServe({ env });
    cleanups.push(() => server.stop("SIGKILL"));
    await until("the log first read", async () => log.requests.includes("ct/v1/get-sth"));
    log.intercept("hang", { match: /get-sth/, times: 1000 });
    const asked = log.requests.length;
    await until("a hanging request", async () => log.requests.slice(asked).includes("ct/v1/get-sth"));
    expect(await server.stop("SIGTERM", 5000)).toBe(0);
  });
});

describe("a core stopped and started again", () => {
  test("goes on where it stopped: nothing skipped, nothing twice", async () => {
    const world = await startCtWorld({ store: "libsql" });
    cleanups.push(() => world.close());
    await world.caughtUp(0);
    await world.addWatch({ domain: "restart.example" });
    await world.issue({ dnsNames: ["a.restart.example"] });
    world.publishAll();
    await world.caughtUp(1);
    await world.until("the first event", async () => (await world.issued()).length === 1);
    await world.harness.core.stop();

    await world.issue({ dnsNames: ["b.restart.example"] });
    world.publishAll();
    const again = createCore({
      config: world.harness.config,
      store: world.harness.store,
      logger: silentLogger,
      transports: world.transports,
      ctFollower: { leaseMs: 3000, headIntervalMs: 100, watchSettleMs: 50 },
    });
    again.start();
    cleanups.push(() => again.stop());
    await world.caughtUp(2);
    const names = await world.until("the second event", async () => {
      const events = await world.issued();
      return events.length >= 2 ? events.map((event) => event.data.dnsNames[0]) : null;
    });
    expect(names).toEqual(["a.restart.example", "b.restart.example"]);
    await again.stop();
  });
});

describe("the log list changing while a run is being written", () => {
  test("the new followers start from the run written: no session lost, no warning, every issuance once", async () => {
    const { createMemoryStore } = await import("../adapters/memory/mod.ts");
    const { createLogger } = await import("../core/base/log.ts");
    const { rewriteList } = await import("./support/ct_world.ts");
    const store = createMemoryStore();
    // The run naming the first issuance is committed slowly (a busy database), and the list changes
    // meanwhile. The commit lands once a follower has read the logs' positions under the new list, or
    // after a second: a follower that started from the position before it would find it moved.
    let changeList: (() => void) | null = null;
    let release = () => {};
    let listed = false;
    const released = new Promise<void>((resolve) => (release = resolve));
    let applied!: () => void;
    const landed = new Promise<void>((resolve) => (applied = resolve));
    const commit = store.ctLogs.commit.bind(store.ctLogs);
    store.ctLogs.commit = async (batch) => {
      if (batch.matches.length === 0 || !changeList) return commit(batch);
      changeList();
      changeList = null;
      await Promise.race([released, Bun.sleep(1000)]);
      const saved = await commit(batch);
      applied();
      return saved;
    };
    const list = store.ctLogs.list.bind(store.ctLogs);
    store.ctLogs.list = async () => {
      const logs = await list();
      if (!listed && logs.length === 2) {
        listed = true;
        release();
        await landed;
      }
      return logs;
    };
    const lines: string[] = [];
    const world = await startCtWorld({
      store,
      logs: [{ kind: "rfc6962" }],
      logger: createLogger("info", (line) => lines.push(line)),
      ctFollower: { listIntervalMs: 50 },
    });
    cleanups.push(() => world.close());
    await world.caughtUp(0);
    await world.addWatch({ domain: "listed.example" });
    const extra = await startFixtureLog({ kind: "tiled" });
    cleanups.push(() => extra.close());
    changeList = () => rewriteList(world, [...world.logs, extra]);
    await world.issue({ dnsNames: ["a.listed.example"] });
    world.publishAll();
    await landed;
    await world.until("the first log at 1 under the new list", async () => {
      const logs = await world.ctLogs();
      return logs.length === 2 && logs.find((log: any) => log.url === world.logs[0]!.url)?.position === 1;
    });
    await world.issue({ dnsNames: ["b.listed.example"], logs: world.logs });
    world.publishAll();
    const names = await world.until("both events", async () => {
      const events = await world.issued();
      return events.length >= 2 ? events.map((event) => event.data.dnsNames[0]) : null;
    });
    expect(names).toEqual(["a.listed.example", "b.listed.example"]);
    await world.until("the first log read on", async () => (await world.ctLogs()).find((log: any) => log.url === world.logs[0]!.url)?.position === 2);
    expect(lines.filter((line) => /taken over|following the CT logs in this process/.test(line))).toEqual([expect.stringContaining("following the CT logs in this process")]);
  });
});

// The log's Retry-After is kept with its position in the database (CONTRACT §21, §9): the process
// taking the follower over waits out what is left of it (it once asked at once).
describe("a log's Retry-After across a failover of the follower", () => {
  test("the process taking the lease over does not ask the log before its Retry-After", async () => {
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const log = await startFixtureLog({ kind: "rfc6962" });
    cleanups.push(() => log.close());
    log.publish();
    const listFile = join(dir, "retry-list.json");
    writeFileSync(listFile, logListJson([log]));
    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: listFile,
      CERTKEEPER_CT_INTERVAL: "1s",
      CERTKEEPER_TLS_TIMEOUT: "1s",
      CERTKEEPER_LOG_LEVEL: "info",
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    await until("the log first read", async () => log.requests.includes("ct/v1/get-sth"));
    const [holder, other] = await until("one follower", async () => (following(a) ? [a, b] : following(b) ? [b, a] : null));

    // The log is rate limiting: come back in an hour.
    log.intercept({ status: 429, headers: { "retry-after": "3600" } }, { match: /get-sth/, times: 1000 });
    const before = log.requests.length;
    await until("a 429 answered", async () => log.requests.slice(before).includes("ct/v1/get-sth"));
    await Bun.sleep(300);
    const limitedAt = log.requests.length;
    expect(await holder.stop("SIGKILL")).not.toBe(0);

    // The other process takes the follower over (the lease lasts 5 s)…
    await until("the other process following", async () => following(other));
    await Bun.sleep(2_000);
    // …and waits for the hour the log asked for.
    expect(log.requests.slice(limitedAt)).toEqual([]);
  });
});
