/**
 * static-ct-api: "the origin line MUST be the submission prefix of the log as a schema-less URL with no
 * trailing slashes". A checkpoint whose first line is U+FEFF (a byte-order mark) followed by the origin
 * has another origin line (signed-note and tlog-checkpoint compare the line's bytes): not believed.
 */
import { afterEach, expect, test } from "bun:test";
import { FixtureLog, logListJson } from "./support/ct_log_server.ts";
import { checkpoint } from "./support/ct_log_tree.ts";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { parseLogList } from "../core/ctlogs/log_list.ts";
import { TileReader } from "../core/ctlogs/tile_reader.ts";

let log: FixtureLog | undefined;
afterEach(async () => {
  await log?.close();
  log = undefined;
});

test("a checkpoint whose origin line starts with U+FEFF (a BOM) is not the log's origin: not believed", async () => {
  log = await new FixtureLog({ kind: "tiled" }).start();
  log.publish();
  const spec = parseLogList(logListJson([log])).logs[0]!;
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  const reader = new TileReader(spec, { fetcher, timeoutMs: 3000 });
  // The honest checkpoint is believed.
  expect((await reader.head()).size).toBe(0);
  const note = checkpoint(log.key, log.origin, log.head.size, log.head.root, log.head.timestamp);
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(note)]);
  log.intercept({ status: 200, headers: { "content-type": "text/plain; charset=utf-8" }, body: bom }, { match: /^checkpoint$/ });
  let error: unknown = null;
  try {
    await reader.head();
  } catch (caught) {
    error = caught;
  }
  expect(String(error)).toContain("its checkpoint is for");
});
