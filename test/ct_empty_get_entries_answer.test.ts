/**
 * An RFC 6962 log whose get-entries answers no entries for a range its signed head covers (CONTRACT
 * §21): the log is reported and backed off, not asked again and again at once; it is read on once it
 * answers its entries.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("get-entries answering an empty list is reported and backed off, then the log is read on", async () => {
  world = await startCtWorld({ logs: [{ kind: "rfc6962" }] });
  const w = world;
  const log = w.logs[0]!;
  await w.caughtUp(0);
  await w.addWatch({ domain: "empty.example" });
  log.intercept({ status: 200, headers: { "content-type": "application/json" }, body: '{"entries":[]}' }, { match: /get-entries/, times: 1000 });
  await w.issue({ dnsNames: ["empty.example"] });
  w.publishAll();
  const shown = await w.until("the empty answer reported", async () => (await w.ctLogs())[0]?.lastError);
  expect(shown).toMatch(/get-entries answered no entries for 0–0/);
  // Backed off: a handful of requests, not hundreds in a loop.
  expect(log.requests.filter((path) => path.startsWith("ct/v1/get-entries")).length).toBeLessThan(20);
  log.stopIntercepting();
  await w.caughtUp(1);
  expect((await w.until("one event", async () => ((await w.issued()).length === 1 ? w.issued() : null))).length).toBe(1);
});
