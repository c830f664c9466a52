/**
 * The follower's metrics (CONTRACT §21): certkeeper_ct_entries_total{log} counts the entries read, not
 * the log's size (a log first seen is followed from its size: what it held before was never read), and
 * certkeeper_ct_backlog_entries{log} is the newest verified head's size minus the position.
 */
import { afterEach, expect, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function metrics(w: CtWorld): Promise<string> {
  const response = await w.harness.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer metrics-secret" } }));
  return response.text();
}

test("certkeeper_ct_entries_total counts the entries read after a log was first seen, run after run, not its size", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }], config: { metricsToken: "metrics-secret" }, start: false });
  const w = world;
  const log = w.logs[0]!;
  // Three entries before the follower first sees the log: never read.
  for (const name of ["a.before.example", "b.before.example", "c.before.example"]) await w.issue({ dnsNames: [name] });
  w.publishAll();
  w.start();
  await w.caughtUp(3);
  await w.issue({ dnsNames: ["one.after.example"] });
  w.publishAll();
  await w.caughtUp(4);
  await w.issue({ dnsNames: ["two.after.example"] });
  w.publishAll();
  await w.caughtUp(5);
  expect(await metrics(w)).toContain(`certkeeper_ct_entries_total{log="${log.url}"} 2\n`);
});

test("certkeeper_ct_backlog_entries is the verified head's size minus the position while entries cannot be read", async () => {
  world = await startCtWorld({ logs: [{ kind: "tiled" }], config: { metricsToken: "metrics-secret" } });
  const w = world;
  const log = w.logs[0]!;
  await w.issue({ dnsNames: ["first.backlog.example"] });
  w.publishAll();
  await w.caughtUp(1);
  // Its data tiles fail from now on: the new head is verified (treeSize 4), the position stays at 1.
  log.intercept({ status: 500, body: "oops" }, { match: /^tile\/data\//, times: 1000 });
  for (const name of ["a.backlog.example", "b.backlog.example", "c.backlog.example"]) await w.issue({ dnsNames: [name] });
  w.publishAll();
  await w.until("the new head shown, entries unread", async () => {
    const shown = (await w.ctLogs())[0];
    return shown?.treeSize === 4 && shown.position === 1 && shown.lastError !== null ? shown : null;
  });
  expect(await metrics(w)).toContain(`certkeeper_ct_backlog_entries{log="${log.url}"} 3\n`);
});
