/**
 * With CERTKEEPER_CT_SOURCE=search no log is followed: GET /v1/ct/logs is empty and
 * certkeeper_ct_backlog_entries has no sample, also on a database that followed the logs before (the
 * positions it kept are not shown as if they were being read).
 */
import { afterEach, expect, test } from "bun:test";
import { createHarness, expectData, type Harness } from "./support/harness.ts";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";

let world: CtWorld | undefined;
let searching: Harness | undefined;
afterEach(async () => {
  await searching?.core.stop();
  searching = undefined;
  await world?.close();
  world = undefined;
});

test("with CERTKEEPER_CT_SOURCE=search, GET /v1/ct/logs is empty on an installation that once followed the logs", async () => {
  world = await startCtWorld({ store: "libsql" });
  const w = world;
  await w.caughtUp(0);
  await w.harness.core.stop();

  // The same database, now served with the search service.
  searching = await createHarness({ store: w.harness.store, config: { ctSource: "search", metricsToken: "metrics-secret" } });
  const shown = expectData(await searching.request("GET", "/v1/ct/logs"), 200);
  const metrics = await (await searching.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer metrics-secret" } }))).text();
  expect({ shown, backlogSamples: metrics.split("\n").filter((line) => line.startsWith("certkeeper_ct_backlog_entries{")) }).toEqual({ shown: [], backlogSamples: [] });
});
