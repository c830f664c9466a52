/**
 * The follower's refusals (CONTRACT §21: "Each signed tree head or checkpoint is
 * verified ... before its entries are used; a log whose head does not verify, or whose new head is
 * smaller than the last, is skipped and reported (GET /v1/ct/logs ...), never believed"), in the
 * cases of a log signing two roots for one size, a tile log whose
 * hash tiles do not lead to its checkpoint when first seen, and a data tile that is gone for good.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const FOREVER = Number.MAX_SAFE_INTEGER;

async function logWhen(w: CtWorld, url: string, what: string, check: (log: any) => boolean) {
  return w.until(what, async () => (await w.ctLogs()).find((log) => log.url === url && check(log)));
}

describe("a log that signs two different roots for the same size", () => {
  for (const kind of ["rfc6962", "tiled"] as const) {
    test(`${kind}: the second head is refused and reported; the first stays the last verified one`, async () => {
      world = await startCtWorld({ logs: [kind === "rfc6962" ? { kind } : { kind, gzip: false }] });
      const w = world;
      const log = w.logs[0]!;
      await w.caughtUp(0);
      const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
      const fill = (i: number) => log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
      for (let i = 0; i < 4; i++) fill(i);
      w.publishAll();
      const [first] = await w.caughtUp(4);
      // A split view: another tree of the same size 4, its last two leaves different.
      log.entries.length = 2;
      log.tree.leafHashes.length = 2;
      for (let i = 2; i < 4; i++) fill(1000 + i);
      log.publish();
      const refused = await logWhen(w, log.url, "the second root refused", (l) => l.lastError !== null);
      expect(refused.lastError).toBe("it signed two different roots for size 4: not believed");
      expect(refused).toMatchObject({ treeSize: 4, position: 4 });
      expect(first.lastError).toBeNull();
    }, 30_000);
  }
});

describe("a tile log first seen", () => {
  test("hash tiles that do not lead to the checkpoint's root are refused and reported; the log is followed once they do", async () => {
    world = await startCtWorld({ logs: [{ kind: "tiled", gzip: false }], start: false });
    const w = world;
    const log = w.logs[0]!;
    const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
    for (let i = 0; i < 3; i++) log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
    w.publishAll();
    // Level-0 hash tiles of the right length, wrong hashes.
    log.intercept({ status: 200, body: Buffer.alloc(3 * 32, 7), headers: { "content-type": "application/octet-stream" } }, { match: /^tile\/0\//, times: FOREVER });
    w.start();
    const refused = await logWhen(w, log.url, "the hash tiles refused", (l) => l.lastError !== null);
    expect(refused.lastError).toMatch(/hash tiles do not lead to the checkpoint's root at size 3/);
    expect(refused.position).toBeNull();
    log.stopIntercepting();
    const followed = await w.caughtUp(3);
    expect(followed[0].lastError).toBeNull();
  }, 30_000);
});

describe("an RFC 6962 log first seen", () => {
  test("an inclusion proof of its last entry that does not lead to the signed root is refused and reported; the log is followed once it does", async () => {
    world = await startCtWorld({ logs: [{ kind: "rfc6962" }], start: false });
    const w = world;
    const log = w.logs[0]!;
    const filler = await w.issue({ dnsNames: ["filler.other.example"], logs: [] });
    for (let i = 0; i < 3; i++) log.logCertificate(filler.certificate.rawData, filler.chain, { timestamp: Date.now() + i });
    w.publishAll();
    const bogus = JSON.stringify({ leaf_index: 2, audit_path: [Buffer.alloc(32, 7).toString("base64")] });
    log.intercept({ status: 200, body: bogus, headers: { "content-type": "application/json" } }, { match: /^ct\/v1\/get-proof-by-hash/, times: FOREVER });
    w.start();
    const refused = await logWhen(w, log.url, "the proof refused", (l) => l.lastError !== null);
    expect(refused.lastError).toMatch(/its last entry's inclusion proof does not lead to the signed root of size 3/);
    expect(refused.position).toBeNull();
    log.stopIntercepting();
    const followed = await w.caughtUp(3);
    expect(followed[0].lastError).toBeNull();
  }, 30_000);
});

describe("a data tile that is not found, partial nor full", () => {
  test("the log is reported, not asked for the full tile again and again; it is read once the tile is there", async () => {
    world = await startCtWorld({ logs: [{ kind: "tiled", gzip: false }] });
    const w = world;
    const log = w.logs[0]!;
    await w.caughtUp(0);
    await w.addWatch({ domain: "gone.example" });
    log.intercept({ status: 404, body: "not found\n" }, { match: /^tile\/data\//, times: FOREVER });
    await w.issue({ dnsNames: ["a.gone.example"] });
    w.publishAll();
    const refused = await logWhen(w, log.url, "the missing tile reported", (l) => l.lastError !== null);
    expect(refused).toMatchObject({ treeSize: 1, position: 0 });
    // The partial tile, then the full one it would have become: not a loop of requests.
    const asked = log.requests.filter((path) => path.startsWith("tile/data/"));
    expect(asked.length).toBeLessThan(50);
    log.stopIntercepting();
    await w.caughtUp(1);
    const events = await w.until("the issuance announced", async () => {
      const issued = await w.issued();
      return issued.length > 0 ? issued : null;
    });
    expect(events.map((event) => event.data.dnsNames)).toEqual([["a.gone.example"]]);
  }, 30_000);
});
