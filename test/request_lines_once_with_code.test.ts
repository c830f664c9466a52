/**
 * Request lines as an operator reads them (CONTRACT §10, §23): one line per request, carrying the error
 * code of a failed request, and never a key, even one a client put in the wrong place.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { runCliJson, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);
const METRICS_TOKEN = "metr1cs-t0ken-lines";
const ws = tempWorkspace("certkeeper-request-lines-");
let serve: ServeProcess;
let key: string;
let lines: Array<Record<string, any>>;
const ids: Record<string, string> = {};

async function get(name: string, path: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(`${serve.url}${path}`, { headers });
  await response.arrayBuffer();
  ids[name] = response.headers.get("x-request-id")!;
  return response.status;
}

beforeAll(async () => {
  const env = { ...ws.env, CERTKEEPER_LOG_LEVEL: "info", CERTKEEPER_METRICS_TOKEN: METRICS_TOKEN, CERTKEEPER_DNS_SERVERS: "off" };
  const org = await runCliJson(["org", "create", "--name", "Lines"], { env });
  const user = await runCliJson(["user", "create", "--org", org.id, "--email", "o@lines.test", "--role", "owner"], { env });
  key = (await runCliJson(["key", "create", "--user", user.id, "--name", "ops"], { env })).key;
  serve = await startServe({ env, cwd: ws.dir });
  expect(await get("missingAsset", "/docs/no-such-asset.js")).toBe(404);
  expect(await get("metricsWrongToken", "/metrics", { authorization: `Bearer ${METRICS_TOKEN}x` })).toBe(401);
  expect(await get("metricsNoToken", "/metrics")).toBe(401);
  // A client that put its key in the path instead of the header (a mis-built URL).
  expect(await get("keyInPath", `/v1/certificates/${key}`, { authorization: `Bearer ${key}` })).toBe(404);
  expect(await serve.stop("SIGTERM", 10_000)).toBe(0);
  lines = serve.output().stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
});

afterAll(async () => {
  await serve?.stop("SIGKILL");
  ws.cleanup();
});

const requestLines = (name: string) => lines.filter((line) => line.msg === "request" && line.requestId === ids[name]);

describe("request lines", () => {
  test("GET /docs/<an asset that does not exist> is one request line, not two with the same request id", () => {
    expect(requestLines("missingAsset").map((line) => [line.status, line.code])).toEqual([[404, "not_found"]]);
  });

  test("a /metrics scrape refused for its token carries the error code, as every failed request's line does", () => {
    expect(requestLines("metricsWrongToken").map((line) => [line.status, line.code])).toEqual([[401, "invalid_api_key"]]);
    expect(requestLines("metricsNoToken").map((line) => [line.status, line.code])).toEqual([[401, "missing_api_key"]]);
  });

  test("an API key sent in the path is not written to the log", () => {
    expect(requestLines("keyInPath").length).toBe(1);
    expect(lines.filter((line) => JSON.stringify(line).includes(key.slice("ck_live_".length))).map((line) => line.path)).toEqual([]);
  });
});
