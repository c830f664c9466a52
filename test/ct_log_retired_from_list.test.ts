/**
 * A log the list no longer follows (CONTRACT §21: logs in state usable, qualified or readonly): once the
 * list read again says it is retired, GET /v1/ct/logs shows only the logs followed, and
 * certkeeper_ct_backlog_entries has no sample for the retired one.
 */
import { afterEach, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { logListJson } from "./support/ct_log_server.ts";

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

test("a log the list now says is retired is no longer shown by GET /v1/ct/logs nor in the backlog metric", async () => {
  world = await startCtWorld({
    logs: [{ kind: "rfc6962" }, { kind: "rfc6962" }],
    ctFollower: { listIntervalMs: 100 },
    config: { metricsToken: "metrics-secret" },
  });
  const w = world;
  const [kept, retired] = w.logs as [(typeof w.logs)[0], (typeof w.logs)[0]];
  await w.caughtUp(0);
  writeFileSync(w.listFile, logListJson([kept, retired.listEntry("retired")]));
  const shown = await w.until("only the followed log shown", async () => {
    const logs = await w.ctLogs();
    return logs.length === 1 ? logs : null;
  });
  expect(shown.map((log: any) => log.url)).toEqual([kept.url]);
  const metrics = await (await w.harness.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer metrics-secret" } }))).text();
  const samples = metrics.split("\n").filter((line) => line.startsWith("certkeeper_ct_backlog_entries{"));
  expect(samples).toEqual([`certkeeper_ct_backlog_entries{log="${kept.url}"} 0`]);
});
