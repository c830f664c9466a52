/**
 * Following the logs safely (CONTRACT §21, §3): an issuance reaches only the watches that match it (never
 * another organization's or mode's); a log that lies about its entries, floods, or signs for another
 * origin is refused before anything it said raises an event; GET /v1/ct/logs is for owners and admins.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { expectData, expectError } from "./support/harness.ts";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { FixtureLog } from "./support/ct_log_server.ts";
import { issueThroughCt } from "./support/ct_certs.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function logWhen(w: CtWorld, url: string, what: string, check: (log: any) => boolean) {
  return w.until(what, async () => (await w.ctLogs()).find((log) => log.url === url && check(log)));
}

describe("who sees an issuance", () => {
  test("an event goes only to the organization and mode of the matching watch", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const other = await w.harness.core.services.admin.createOrganization({ name: "Other", plan: "enterprise" });
    const otherKey = await w.harness.makeKey("owner", "live", other.id);
    const testKey = w.harness.keys.test;
    const live = await w.addWatch({ domain: "live.example" });
    const testMode = await w.addWatch({ domain: "test.example" }, testKey);
    await w.addWatch({ domain: "theirs.example" }, otherKey);
    await w.issue({ dnsNames: ["live.example"] });
    await w.issue({ dnsNames: ["test.example"] });
    w.publishAll();
    await w.caughtUp(2);
    await w.until("both events", async () => ((await w.issued()).length === 1 && (await w.issued(testKey)).length === 1 ? true : null));
    expect((await w.issued()).map((event) => event.data.watchId)).toEqual([live.id]);
    expect((await w.issued(testKey)).map((event) => event.data.watchId)).toEqual([testMode.id]);
    expect(await w.issued(otherKey)).toEqual([]);
  });
});

describe("logs that lie", () => {
  test("entries other than those the signed tree holds are refused: no event for the forged one, the position kept", async () => {
    world = await startCtWorld({ config: { metricsToken: "metrics-secret" } });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "bank.example" });
    // The logs hold an unrelated certificate; they serve a forged entry for the watched name in its place.
    await w.issue({ dnsNames: ["harmless.example"] });
    const forger = new FixtureLog({ kind: "rfc6962" });
    const forged = await issueThroughCt({ issuer: w.ca, dnsNames: ["login.bank.example"], logs: [] });
    forger.logCertificate(forged.certificate.rawData, forged.chain);
    for (const log of w.logs) {
      const scratch = new FixtureLog({ kind: log.kind });
      scratch.logCertificate(forged.certificate.rawData, forged.chain);
      log.lies.set(0, scratch.entries[0]!);
    }
    w.publishAll();
    for (const log of w.logs) {
      const shown = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
      expect(shown).toMatchObject({ treeSize: 1, position: 0, lastError: "its entries 0–0 do not match its signed tree head (size 1): not believed" });
    }
    expect(await w.issued()).toEqual([]);
    const metrics = await (await w.harness.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer metrics-secret" } }))).text();
    for (const log of w.logs) expect(metrics).toContain(`certkeeper_ct_backlog_entries{log="${log.url}"} 1`);
    for (const log of w.logs) log.lies.clear();
    await w.caughtUp(1);
    expect(await w.issued()).toEqual([]);
  });

  test("in a backlog, the runs before a lie are written, the lie and everything after it are not", async () => {
    world = await startCtWorld({ logs: [{ kind: "rfc6962", batchLimit: 8 }], ctFollower: { runEntries: 8 } });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "runs.example" });
    const log = w.logs[0]!;
    const filler = await w.issue({ dnsNames: ["filler.example"], logs: [] });
    // A first answer teaches the follower the log's batch of 8: the backlog is then asked 8 at a time.
    for (let i = 0; i < 9; i++) log.logCertificate(filler.certificate.rawData, filler.chain);
    w.publishAll();
    await w.caughtUp(9);
    for (let i = 9; i < 40; i++) {
      if (i === 12 || i === 35) await w.issue({ dnsNames: [`n${i}.runs.example`] });
      else log.logCertificate(filler.certificate.rawData, filler.chain);
    }
    const scratch = new FixtureLog({ kind: "rfc6962" });
    const forged = await issueThroughCt({ issuer: w.ca, dnsNames: ["forged.runs.example"], logs: [] });
    scratch.logCertificate(forged.certificate.rawData, forged.chain);
    log.lies.set(22, scratch.entries[0]!);
    w.publishAll();
    const refused = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
    // Runs of 8 from 9: 9–16 and 17–24 hold the lie at 22.
    expect(refused).toMatchObject({ treeSize: 40, position: 17, lastError: "its entries 17–24 do not match its signed tree head (size 40): not believed" });
    expect((await w.issued()).map((event) => event.data.dnsNames[0])).toEqual(["n12.runs.example"]);
    log.lies.clear();
    await w.caughtUp(40);
    const events = await w.until("the later event", async () => ((await w.issued()).length >= 2 ? w.issued() : null));
    expect(events.map((event) => event.data.dnsNames[0])).toEqual(["n12.runs.example", "n35.runs.example"]);
  });

  test("a log that answers more entries than asked, or a tile of more entries than its width, is refused", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "flood.example" });
    const [rfc, tiled] = w.logs as [FixtureLog, FixtureLog];
    await w.issue({ dnsNames: ["flood.example"] });
    w.publishAll();
    const entry = { leaf_input: rfc.leafInput(0).toString("base64"), extra_data: "" };
    rfc.intercept({ status: 200, body: JSON.stringify({ entries: [entry, entry, entry] }) }, { match: /get-entries/ });
    tiled.intercept({ status: 200, body: Buffer.concat([tiled.entries[0]!.tileLeaf, tiled.entries[0]!.tileLeaf]) }, { match: /^tile\/data/ });
    const flooded = await logWhen(w, rfc.url, "the refusal", (l) => l.lastError !== null);
    expect(flooded.lastError).toBe(`${rfc.url}ct/v1/get-entries: answered 3 entries for 1 asked`);
    const tile = await logWhen(w, tiled.url, "the refusal", (l) => l.lastError !== null);
    expect(tile.lastError).toBe(`${tiled.url}: data tile 0 is malformed (the data tile holds more than 1 entries)`);
    await w.caughtUp(1);
    expect((await w.issued()).length).toBe(1);
  });

  test("a checkpoint for another origin is not believed, though signed with the log's key", async () => {
    world = await startCtWorld({ logs: [{ kind: "tiled" }] });
    const w = world;
    await w.caughtUp(0);
    const log = w.logs[0]!;
    (log as { origin: string }).origin = "impostor.example/log";
    await w.issue({ dnsNames: ["origin.example"] });
    w.publishAll();
    const shown = await logWhen(w, log.url, "the refusal", (l) => l.lastError !== null);
    expect(shown.lastError).toMatch(/^its checkpoint is for "impostor\.example\/log", not "submit-[0-9a-f]{8}\.ct\.test\/2026h1"$/);
    expect(shown.position).toBe(0);
  });
});

describe("GET /v1/ct/logs", () => {
  test("owners and admins see it; members are refused; no key is 401", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    const h = w.harness;
    expect(expectData(await h.request("GET", "/v1/ct/logs", { key: h.keys.admin.key }), 200).length).toBe(2);
    expectError(await h.request("GET", "/v1/ct/logs", { key: h.keys.member.key }), 403, "permission_denied");
    expectError(await h.request("GET", "/v1/ct/logs", { key: null }), 401, "missing_api_key");
    expectError(await h.request("POST", "/v1/ct/logs", { body: {} }), 405, "method_not_allowed");
  });
});
