/**
 * Scale-out (CONTRACT §21, §9): "Requests honour 429 / Retry-After … per log". The time a log may be
 * asked again is kept with its position in the database: when the following process is killed and
 * the other takes the follower's lease over, the new follower waits out what is left of the log's
 * Retry-After (it once asked at once, an hour before the time the log named).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSqld } from "./support/sqld.ts";
import { startServe, type ServeProcess } from "./support/cli.ts";
import { logListJson, startFixtureLog } from "./support/ct_log_server.ts";

setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-review-ct-retry-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, check: () => T | null | undefined | false, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}

const following = (server: ServeProcess) => server.output().stdout.includes("following the CT logs in this process");

describe("a log's Retry-After across a failover of the follower", () => {
  test("the process taking the lease over does not ask the log before its Retry-After", async () => {
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const log = await startFixtureLog({ kind: "rfc6962" });
    cleanups.push(() => log.close());
    log.publish();
    const listFile = join(dir, "list.json");
    writeFileSync(listFile, logListJson([log]));
    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: listFile,
      CERTKEEPER_CT_INTERVAL: "1s",
      CERTKEEPER_TLS_TIMEOUT: "1s",
      CERTKEEPER_LOG_LEVEL: "info",
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    await until("the log first read", () => log.requests.includes("ct/v1/get-sth"));
    const [holder, other] = await until("one follower", () => (following(a) ? [a, b] : following(b) ? [b, a] : null));

    // The log is rate limiting: come back in an hour.
    log.intercept({ status: 429, headers: { "retry-after": "3600" } }, { match: /get-sth/, times: 1000 });
    const before = log.requests.length;
    await until("a 429 answered", () => log.requests.slice(before).includes("ct/v1/get-sth"));
    await Bun.sleep(300);
    const limitedAt = log.requests.length;
    expect(await holder.stop("SIGKILL")).not.toBe(0);

    // The other process takes the follower over (the lease lasts 5 s)…
    await until("the other process following", () => following(other));
    await Bun.sleep(2_000);
    // …and waits for the hour the log asked for.
    expect(log.requests.slice(limitedAt)).toEqual([]);
  });
});
