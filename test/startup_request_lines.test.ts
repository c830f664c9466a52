/**
 * CONTRACT §10 and §23: request lines carry the error code of a failed request, with the request id
 * the response's X-Request-Id names (docs/operations.md: "Every request is one line at info, except
 * health probes"). The port is taken before the database is opened, and a listener of
 * its own answers every request with 503 `storage_unavailable` until the API takes over. Those answers
 * are requests like any other: a client told 503 at start (a deployment's smoke test, a load balancer
 * that sent traffic on /healthz) gives the operator its request id, which must be found in the log.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { CLI_MAIN, freePort } from "./support/cli.ts";
import { holdWriteLock, type WriteLockHolder } from "./support/write_lock_holder.ts";
import { temporaryDirectory } from "./support/temp.ts";

setDefaultTimeout(60_000);
const dir = temporaryDirectory("certkeeper-startup-request-lines-");
let child: ReturnType<typeof Bun.spawn> | undefined;
let holder: WriteLockHolder | undefined;
afterAll(async () => {
  child?.kill("SIGKILL");
  await child?.exited;
  await holder?.kill();
});

test("a request answered 503 while the database is opened at start is logged as a request line with its code and request id", async () => {
  const path = join(dir, "db.sqlite");
  await (await openLibsqlStore({ url: `file:${path}` })).close();
  // Another process holding the write lock (as one upgrading the database does) until told to stop.
  holder = await holdWriteLock(path);
  const port = await freePort();
  child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CERTKEEPER_DATABASE_URL: `file:${path}`, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "info", CERTKEEPER_LOG_FORMAT: "json", CERTKEEPER_DNS_SERVERS: "off" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const reading = (async () => {
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) output += new TextDecoder().decode(chunk);
  })();
  let answered: { status: number; code: string; requestId: string | null } | undefined;
  try {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && !answered) {
      const response = await fetch(`http://127.0.0.1:${port}/v1/certificates`).catch(() => undefined);
      if (response) answered = { status: response.status, code: ((await response.json()) as any).error?.code, requestId: response.headers.get("x-request-id") };
      else await Bun.sleep(100);
    }
  } finally {
    await holder.release();
  }
  expect(answered).toMatchObject({ status: 503, code: "storage_unavailable" });
  // Once started, it is stopped, and its whole log read.
  for (let i = 0; i < 100 && !output.includes("certkeeper is listening"); i++) await Bun.sleep(100);
  child.kill("SIGTERM");
  await child.exited;
  await reading;
  const lines = output.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line));
  const requestLines = lines.filter((line) => line.msg === "request" && line.requestId === answered!.requestId);
  expect(requestLines.map((line) => ({ path: line.path, status: line.status, code: line.code }))).toEqual([
    { path: "/v1/certificates", status: 503, code: "storage_unavailable" },
  ]);
});
