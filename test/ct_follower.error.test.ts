/**
 * Logs that fail (CONTRACT §21): a head that does not verify or a tree that shrinks is never believed,
 * its position kept and the reason shown in GET /v1/ct/logs; 429 and Retry-After are honoured, errors
 * backed off per log; truncated, oversized and garbage answers, and logs that hang or trickle, are cut
 * off; a log answering fewer entries than asked, or dropping a partial tile, is read on. Each log
 * recovers on its own, and one failing log never holds up another.
 */
import { afterEach, describe, expect, onTestFinished, test } from "bun:test";
import { gzipSync } from "node:zlib";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { FixtureLog, logListJson } from "./support/ct_log_server.ts";
import { createHarness } from "./support/harness.ts";
import { DEFAULT_CONFIG } from "../core/config/config.ts";
import { ConfigError } from "../core/config/config.ts";
import { runCli } from "./support/cli.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

/** The listed log of `url`, once `check` holds for it. */
async function logWhen(w: CtWorld, url: string, what: string, check: (log: any) => boolean) {
  return w.until(what, async () => (await w.ctLogs()).find((log) => log.url === url && check(log)));
}

async function eventsFor(w: CtWorld, count: number) {
  return w.until(`${count} events`, async () => {
    const events = await w.issued();
    return events.length >= count ? events : null;
  });
}

describe("heads that are not believed", () => {
  test("a head whose signature does not verify is refused, its position kept, until the log signs properly again", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "sig.example" });
    for (const log of w.logs) log.badSignature = true;
    await w.issue({ dnsNames: ["sig.example"] });
    w.publishAll();
    for (const log of w.logs) {
      const shown = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
      expect(shown).toMatchObject({ treeSize: 0, position: 0 });
      expect(shown.lastError).toMatch(log.kind === "rfc6962" ? /signed tree head \(size \d\) does not verify/ : /carries a signature that does not verify/);
    }
    expect(await w.issued()).toEqual([]);
    for (const log of w.logs) log.badSignature = false;
    await w.caughtUp(1);
    expect((await eventsFor(w, 1)).map((event) => event.data.dnsNames)).toEqual([["sig.example"]]);
    expect((await w.ctLogs()).map((log) => log.lastError)).toEqual([null, null]);
  });

  test("a head signed by another key is refused", async () => {
    const { fixtureKey } = await import("./support/ct_log_tree.ts");
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    for (const log of w.logs) log.wrongKey = fixtureKey();
    w.publishAll();
    for (const log of w.logs) {
      const shown = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
      expect(shown.lastError).toMatch(log.kind === "rfc6962" ? /does not verify with the log's key/ : /is not signed by the log's key/);
    }
  });

  test("a tree smaller than the last verified one is refused and the position kept; the log is followed again once it grows past it", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "shrink.example" });
    await w.issue({ dnsNames: ["a.shrink.example"] });
    await w.issue({ dnsNames: ["b.shrink.example"] });
    w.publishAll();
    await w.caughtUp(2);
    await eventsFor(w, 2);
    for (const log of w.logs) log.publish(1);
    for (const log of w.logs) {
      const shown = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
      expect(shown).toMatchObject({ treeSize: 2, position: 2, lastError: "its new head (size 1) is smaller than the last verified one (size 2): not believed" });
    }
    await w.issue({ dnsNames: ["c.shrink.example"] });
    w.publishAll();
    await w.caughtUp(3);
    expect((await eventsFor(w, 3)).map((event) => event.data.dnsNames[0])).toEqual(["a.shrink.example", "b.shrink.example", "c.shrink.example"]);
  });
});

describe("a log that forks while the follower is behind its last verified head", () => {
  /**
   * The follower verified head H1 but read only to a position below it (a run was refused: an entry
   * served wrong). Then the log serves a larger head H2. Believed only as H1's extension: the entries
   * up to H1 are proven against H1 first (RFC 6962 §5.3; static-ct-api's consistency with the current
   * checkpoint).
   */
  async function behindH1(kind: "rfc6962" | "tiled") {
    world = await startCtWorld({ logs: [kind === "rfc6962" ? { kind, batchLimit: 8 } : { kind, gzip: false }], ctFollower: { runEntries: 8 } });
    const w = world;
    const log = w.logs[0]!;
    await w.caughtUp(0);
    await w.addWatch({ domain: "fork.example" });
    const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
    const fill = (i: number) => log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
    // The first run: 8 entries (and the log's batch of 8 learnt).
    for (let i = 0; i < 8; i++) fill(i);
    w.publishAll();
    await w.caughtUp(8);
    // H1: 40 entries, a watched issuance at 20; entry 17 served wrong for now.
    for (let i = 8; i < 40; i++) {
      if (i === 20) await w.issue({ dnsNames: ["login.fork.example"] });
      else fill(i);
    }
    const liar = new FixtureLog({ kind });
    liar.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: 1 });
    log.lies.set(17, liar.entries[0]!);
    log.publish();
    const h1 = log.head.root;
    // Stopped at the run holding entry 17 (an RFC 6962 run of 8 from 16; a tile log's first tile from 8).
    const stuck = await logWhen(w, log.url, "stopped below 17 under H1", (l) => l.treeSize === 40 && l.position >= 8 && l.position <= 16 && l.lastError !== null);
    expect(stuck.lastError).toMatch(/do not match its signed tree head \(size 40\)/);
    return { w, log, fill, h1, position: stuck.position as number };
  }

  test("a fork (H2 not an extension of H1) is refused, H1 kept as the last verified head; both kinds of log", async () => {
    for (const kind of ["rfc6962", "tiled"] as const) {
      const { w, log, fill, h1, position } = await behindH1(kind);
      // The fork: the entries read so far kept, others after them (no watched issuance) signed as H2, size 47.
      log.entries.length = position;
      log.tree.leafHashes.length = position;
      for (let i = position; i < 47; i++) fill(1000 + i);
      log.lies.clear();
      log.publish();
      expect(Buffer.from(log.tree.root(40)).equals(Buffer.from(h1))).toBe(false);
      const refused = await logWhen(w, log.url, "the fork refused", (l) => l.lastError !== null && l.lastError !== undefined && /size 40/.test(l.lastError));
      // Three rounds' time more: never believed.
      await Bun.sleep(500);
      const [shown] = await w.ctLogs();
      expect(shown).toMatchObject({ treeSize: 40, position });
      // (The run named may shrink once the log's batch size is learned from its short answers.)
      expect(refused.lastError).toMatch(/do not match its signed tree head \(size 40\)/);
      expect(shown.lastError).toMatch(/do not match its signed tree head \(size 40\): not believed/);
      expect(await w.issued()).toEqual([]);
      await world!.close();
      world = undefined;
    }
  }, 60_000);

  test("an honest log that grew meanwhile is read to H1, then on to H2: each issuance once", async () => {
    const { w, log, fill } = await behindH1("rfc6962");
    for (let i = 40; i < 47; i++) fill(i);
    log.lies.clear();
    log.publish();
    await logWhen(w, log.url, "read to 47", (l) => l.treeSize === 47 && l.position === 47 && l.lastError === null);
    expect((await eventsFor(w, 1)).map((event) => event.data.dnsNames)).toEqual([["login.fork.example"]]);
  }, 60_000);
});

describe("a log that forks while the follower is caught up with its last verified head", () => {
  /**
   * The follower read everything up to H1. The log then signs H2, larger, whose first leaves are not
   * H1's. H2 is stored and shown only once proven H1's extension; refused, H1 stays the last verified
   * head, and the log's extension of H1 is still followed when it comes.
   */
  for (const kind of ["rfc6962", "tiled"] as const) {
    test(`${kind}: a forked head is refused and never shown; the last verified head stays`, async () => {
      world = await startCtWorld({ logs: [kind === "rfc6962" ? { kind } : { kind, gzip: false }] });
      const w = world;
      const log = w.logs[0]!;
      await w.caughtUp(0);
      const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
      const fill = (i: number) => log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
      for (let i = 0; i < 4; i++) fill(i);
      w.publishAll();
      await w.caughtUp(4); // H1: size 4, verified and read
      // The fork: H2 of size 6 whose first 4 entries are not H1's.
      log.entries.length = 2;
      log.tree.leafHashes.length = 2;
      for (let i = 2; i < 6; i++) fill(1000 + i);
      log.publish();
      const refused = await w.until("the fork refused", async () => (await w.ctLogs()).find((l: any) => l.lastError !== null));
      expect(refused.lastError).toMatch(/not believed/);
      await Bun.sleep(300);
      const [shown] = await w.ctLogs();
      // H1 (size 4) is the last verified head; H2 (size 6) was never proven consistent with it.
      expect(shown).toMatchObject({ treeSize: 4, position: 4 });
    }, 30_000);
  }

  test("rfc6962: after a forked head, the log's extension of the verified head is followed, its issuances announced", async () => {
    world = await startCtWorld({ logs: [{ kind: "rfc6962" }] });
    const w = world;
    const log = w.logs[0]!;
    await w.caughtUp(0);
    await w.addWatch({ domain: "after-fork.example" });
    const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
    const fill = (i: number) => log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
    for (let i = 0; i < 4; i++) fill(i);
    w.publishAll();
    await w.caughtUp(4);
    const honest = log.entries.slice();
    const honestHashes = log.tree.leafHashes.slice();
    // One forked head H2 (size 6) is served...
    log.entries.length = 2;
    log.tree.leafHashes.length = 2;
    for (let i = 2; i < 6; i++) fill(1000 + i);
    log.publish();
    await w.until("the fork refused", async () => (await w.ctLogs()).find((l: any) => l.lastError !== null));
    // ...then the log serves H1's extension again, growing well past H2, with a watched issuance.
    log.entries.length = 0;
    log.entries.push(...honest);
    log.tree.leafHashes.length = 0;
    log.tree.leafHashes.push(...honestHashes);
    for (let i = 4; i < 9; i++) fill(i);
    await w.issue({ dnsNames: ["www.after-fork.example"] });
    log.publish();
    const caught = await w.until("H1's extension followed", async () => (await w.ctLogs()).find((l: any) => l.position === 10 && l.lastError === null), 5_000).catch(() => null);
    expect(caught ?? (await w.ctLogs())[0]).toMatchObject({ treeSize: 10, position: 10, lastError: null });
    expect((await eventsFor(w, 1)).map((event) => event.data.dnsNames)).toEqual([["www.after-fork.example"]]);
  }, 30_000);
});

describe("failing, slow and hostile answers", () => {
  test("a 429's Retry-After is waited out before the log is asked again; the other log goes on meanwhile", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "slow.example" });
    const [rfc, tiled] = w.logs as [typeof w.logs[0], typeof w.logs[0]];
    rfc.intercept({ status: 429, headers: { "retry-after": "2" }, body: "slow down" }, { match: /get-sth/ });
    const asked = rfc.requests.length;
    await w.issue({ dnsNames: ["slow.example"] });
    w.publishAll();
    const shown = await logWhen(w, rfc.url, "the 429", (l) => l.lastError !== null);
    expect(shown.lastError).toBe(`${rfc.url}ct/v1/get-sth asked to slow down (HTTP 429)`);
    await logWhen(w, tiled.url, "the tile log read on", (l) => l.position === 1);
    await w.caughtUp(1);
    // The request after the 429 came no sooner than its Retry-After.
    const limited = rfc.requests.findIndex((path, i) => i >= asked && path === "ct/v1/get-sth");
    expect(rfc.requestTimes[limited + 1]! - rfc.requestTimes[limited]!).toBeGreaterThanOrEqual(2000);
    expect((await eventsFor(w, 1)).length).toBe(1);
  });

  test("HTTP 500s are backed off, each wait longer than the last, and the log is followed again once it answers", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const tiled = w.logs[1]!;
    tiled.intercept({ status: 500, body: "oops" }, { match: /^checkpoint$/, times: 4 });
    const asked = tiled.requests.length;
    await w.issue({ dnsNames: ["oops.example"] });
    w.publishAll();
    await w.caughtUp(1);
    const times = tiled.requestTimes.filter((_, i) => i >= asked && tiled.requests[i] === "checkpoint").slice(0, 5);
    expect(times.length).toBe(5);
    const gaps = times.slice(1).map((t, i) => t - times[i]!);
    // First backoff 100 ms in this world, doubling: at least 100, 200, 400, 800.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(100 * 2 ** i - 5));
  });

  test("garbage, truncated, oversized and gzip-bomb answers are refused with a reason; the log is read on once they stop", async () => {
    world = await startCtWorld({ config: { tlsTimeoutMs: 400 } });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "junk.example" });
    const [rfc, tiled] = w.logs as [typeof w.logs[0], typeof w.logs[0]];
    const bomb = gzipSync(Buffer.alloc(65 * 1024 * 1024));
    const cases: Array<[typeof rfc, Parameters<typeof rfc.intercept>[0], RegExp, RegExp]> = [
      [tiled, "garbage", /^tile\/data\//, /data tile 0 is malformed|not gzip/],
      [tiled, { status: 200, headers: { "content-encoding": "gzip" }, body: bomb }, /^tile\/data\//, /more than 1048576 bytes once decompressed/],
      [tiled, "huge", /^tile\/data\//, /declared 104857600 bytes, more than the \d+ bytes allowed/],
      [rfc, { status: 200, body: '{"entries": [' }, /get-entries/, /not JSON/],
      [rfc, "garbage", /get-sth/, /not JSON/],
    ];
    let issued = 0;
    for (const [log, answer, match, reason] of cases) {
      // Answered until the refusal is seen: a log's error shows until its next good answer, which a
      // single bad answer would bring a backoff later, sooner than a loaded machine may look.
      log.intercept(answer, { match, times: Infinity });
      await w.issue({ dnsNames: [`n${issued}.junk.example`] });
      issued++;
      w.publishAll();
      const shown = await logWhen(w, log.url, `the refusal matching ${reason}`, (l) => reason.test(l.lastError ?? ""));
      expect(shown.position).toBe(issued - 1);
      log.stopIntercepting();
      await w.caughtUp(issued);
    }
    // Each issuance once, though both logs carry it and each was refused once in one of them.
    expect((await eventsFor(w, issued)).length).toBe(issued);
  });

  test("a log that hangs or trickles is cut off at CERTKEEPER_TLS_TIMEOUT × 3, while the other log is followed", async () => {
    world = await startCtWorld({ config: { tlsTimeoutMs: 300 } });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "hang.example" });
    const [rfc, tiled] = w.logs as [typeof w.logs[0], typeof w.logs[0]];
    // Each log hangs or trickles until its error is seen (see above), then answers again.
    rfc.intercept("hang", { match: /get-sth/, times: Infinity });
    tiled.intercept("trickle", { match: /^checkpoint$/, times: Infinity });
    await w.issue({ dnsNames: ["hang.example"] });
    w.publishAll();
    const hung = await logWhen(w, rfc.url, "the hanging log cut off", (l) => l.lastError !== null);
    expect(hung.lastError).toBe(`${rfc.url}ct/v1/get-sth did not answer: 127.0.0.1:${new URL(rfc.url).port} did not answer within 900 ms`);
    rfc.stopIntercepting();
    const trickled = await logWhen(w, tiled.url, "the trickling log cut off", (l) => l.lastError !== null);
    expect(trickled.lastError).toMatch(/checkpoint did not answer: .* did not finish its answer within 900 ms/);
    tiled.stopIntercepting();
    await w.caughtUp(1);
    expect((await eventsFor(w, 1)).length).toBe(1);
  });

  test("stopping does not wait for a log that hangs", async () => {
    // Requests may take 3 × 20 s here: a stop that waited for this one would outlast the test.
    world = await startCtWorld({ config: { tlsTimeoutMs: 20_000 } });
    const w = world;
    await w.caughtUp(0);
    const rfc = w.logs[0]!;
    const asked = rfc.requests.length;
    rfc.intercept("hang", { match: /get-sth/, times: 1 });
    await w.until("the hanging request", async () => rfc.requests.slice(asked).includes("ct/v1/get-sth"));
    await w.harness.core.stop();
    expect((await w.ctLogs()).map((log) => log.position)).toEqual([0, 0]);
  });

  test("a log answering fewer entries than asked is read on from where it stopped; a dropped partial tile is read from the full tile", async () => {
    world = await startCtWorld({ logs: [{ kind: "rfc6962", batchLimit: 7 }, { kind: "tiled", gzip: false }] });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "batch.example" });
    const [rfc, tiled] = w.logs as [typeof w.logs[0], typeof w.logs[0]];
    const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
    for (let i = 0; i < 250; i++) for (const log of w.logs) log.logCertificate(filler.certificate.rawData, filler.chain);
    for (let i = 0; i < 9; i++) await w.issue({ dnsNames: [`n${i}.batch.example`] });
    // The tile log signs 250 entries but has moved on to 259 and dropped the partial tile of 250.
    rfc.publish();
    tiled.publish(250);
    tiled.dropPartials = true;
    await logWhen(w, tiled.url, "the tile log at 250", (l) => l.position === 250);
    expect(tiled.requests).toContain("tile/data/000.p/250");
    expect(tiled.requests).toContain("tile/data/000");
    tiled.publish();
    await w.caughtUp(259);
    expect((await eventsFor(w, 9)).map((event) => event.data.dnsNames[0])).toEqual(Array.from({ length: 9 }, (_, i) => `n${i}.batch.example`));
    const entryRequests = rfc.requests.filter((path) => path.startsWith("ct/v1/get-entries"));
    expect(entryRequests.length).toBeGreaterThanOrEqual(Math.ceil(259 / 7));
  });
});

describe("the log list", () => {
  test("a log the list moves to another URL (same key) goes on from its position there: nothing skipped", async () => {
    world = await startCtWorld({ logs: [{ kind: "rfc6962" }], ctFollower: { listIntervalMs: 100 } });
    const w = world;
    const log = w.logs[0]!;
    await w.caughtUp(0);
    const watch = await w.addWatch({ domain: "moved.example" });
    await w.issue({ dnsNames: ["a.moved.example"] });
    w.publishAll();
    await w.caughtUp(1);
    await w.until("the first event", async () => ((await w.issued()).length === 1 ? true : null));
    // The log is briefly unreachable; meanwhile an issuance is logged and the list moves the log to a new URL.
    log.intercept({ status: 500 }, { times: 100_000 });
    await w.issue({ dnsNames: ["b.moved.example"] });
    log.publish();
    const moved = log.url.replace("127.0.0.1", "moved.certkeeper.test");
    writeFileSync(w.listFile, logListJson([{ ...log.listEntry(), url: moved }]));
    await w.until("the moved URL listed", async () => (await w.ctLogs()).find((l: any) => l.url === moved));
    log.stopIntercepting();
    const shown = await w.until("the moved URL caught up", async () => (await w.ctLogs()).find((l: any) => l.url === moved && l.position === 2));
    expect(shown.treeSize).toBe(2);
    await Bun.sleep(500);
    const names = (await w.issued()).map((event: any) => [event.data.watchId, event.data.dnsNames[0]]);
    expect(names).toEqual([
      [watch.id, "a.moved.example"],
      [watch.id, "b.moved.example"],
    ]);
  }, 30_000);

  test("a list file that is missing or not a log list stops the server at start, naming CERTKEEPER_CT_LOG_LIST", async () => {
    const missing = join(tmpdir(), `certkeeper-no-list-${crypto.randomUUID()}.json`);
    await expect(createHarness({ config: { ...DEFAULT_CONFIG, ctSource: "logs", ctLogList: missing } })).rejects.toThrow(ConfigError);
    await expect(createHarness({ config: { ctSource: "logs", ctLogList: missing } })).rejects.toThrow(/CERTKEEPER_CT_LOG_LIST: cannot read/);
    const broken = join(tmpdir(), `certkeeper-bad-list-${crypto.randomUUID()}.json`);
    writeFileSync(broken, '{"logs": []}');
    try {
      await expect(createHarness({ config: { ctSource: "logs", ctLogList: broken } })).rejects.toThrow(/CERTKEEPER_CT_LOG_LIST: .*operators/);
    } finally {
      rmSync(broken, { force: true });
    }
  });

  test("`serve` with a bad CERTKEEPER_CT_SOURCE (exit 2) or an unreadable CERTKEEPER_CT_LOG_LIST file (exit 1, as a missing CA file) stops at start, naming the variable", async () => {
    const dir = join(tmpdir(), `certkeeper-ct-cli-${crypto.randomUUID()}`);
    const env = { CERTKEEPER_DATABASE_URL: `file:${join(dir, "db")}`, CERTKEEPER_PORT: "0" };
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const source = await runCli(["serve"], { env: { ...env, CERTKEEPER_CT_SOURCE: "crtsh" } });
    expect(source.code).toBe(2);
    expect(source.stderr).toContain('CERTKEEPER_CT_SOURCE: "crtsh" is not a CT source: use search or logs');
    const list = await runCli(["serve"], { env: { ...env, CERTKEEPER_CT_SOURCE: "logs", CERTKEEPER_CT_LOG_LIST: join(dir, "nowhere.json") } });
    expect(list.code).toBe(1);
    expect(list.stderr).toContain("certkeeper could not start: CERTKEEPER_CT_LOG_LIST: cannot read");
  });
});
