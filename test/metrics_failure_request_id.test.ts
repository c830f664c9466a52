/**
 * CONTRACT §10: logs are "one JSON object per line on stdout, with the request id", and §4: every
 * response carries X-Request-Id. A scrape of /metrics that fails before anything is sent is answered
 * with the API's error envelope (503 `storage_unavailable` for a database that is down, 500
 * `internal_error` for anything else, whose message says "the request id identifies it in the logs").
 * The operator looks the failure up by the request id the scraper saw: it must be the one in the
 * "metrics scrape failed" line, as it is in the request line.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createLogger } from "../core/base/log.ts";
import { StorageUnavailableError } from "../core/store/ports.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { createHarness, type Harness } from "./support/harness.ts";

const TOKEN = "m3trics-t0ken-request-id";
const lines: Array<Record<string, any>> = [];
let h: Harness;
let failure: () => Error;

beforeAll(async () => {
  const store = createMemoryStore();
  h = await createHarness({ store, config: { metricsToken: TOKEN }, logger: createLogger("info", (line) => lines.push(JSON.parse(line))) });
  // The first thing a scrape reads from the database fails.
  store.events.countPending = async () => {
    throw failure();
  };
});
afterAll(() => h.close());

async function scrapeFailing(): Promise<{ status: number; code: string; ids: { response: string | null; failed: unknown[]; request: unknown[] } }> {
  lines.length = 0;
  const response = await h.app.handle(new Request("http://localhost/metrics", { headers: { authorization: `Bearer ${TOKEN}` } }));
  const body = (await response.json()) as any;
  return {
    status: response.status,
    code: body.error.code,
    ids: {
      response: response.headers.get("x-request-id"),
      failed: lines.filter((line) => line.msg === "metrics scrape failed").map((line) => line.requestId),
      request: lines.filter((line) => line.msg === "request" && line.path === "/metrics").map((line) => line.requestId),
    },
  };
}

test("/metrics with the database down: the error line carries the request id of the 503 and of its request line", async () => {
  failure = () => new StorageUnavailableError("unreachable");
  const { status, code, ids } = await scrapeFailing();
  expect([status, code]).toEqual([503, "storage_unavailable"]);
  expect(ids).toEqual({ response: ids.response, failed: [ids.response], request: [ids.response] });
});

test("/metrics failing unexpectedly: the 500's request id finds the error line, as its message promises", async () => {
  failure = () => new Error("an unexpected failure");
  const { status, code, ids } = await scrapeFailing();
  expect([status, code]).toEqual([500, "internal_error"]);
  expect(ids).toEqual({ response: ids.response, failed: [ids.response], request: [ids.response] });
});
