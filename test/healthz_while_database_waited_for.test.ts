/**
 * CONTRACT §10: "GET /healthz (no key): 200 when the process is up; GET /readyz: 200 when the database
 * answers, else 503"; processes started together upgrade the database once, and the others wait for it
 * (up to 10 minutes). A process waiting for another's upgrade (here: for the write lock the other
 * holds) is up: a liveness probe that found nothing listening restarted it (and, with a long upgrade,
 * the upgrading process too). /healthz answers while /readyz says 503, and the API once started.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { CLI_MAIN, freePort } from "./support/cli.ts";
import { holdWriteLock } from "./support/write_lock_holder.ts";
import { temporaryDirectory } from "./support/temp.ts";

setDefaultTimeout(60_000);
const dir = temporaryDirectory("certkeeper-healthz-during-startup-");
let child: ReturnType<typeof Bun.spawn> | undefined;
afterAll(async () => {
  child?.kill("SIGKILL");
  await child?.exited;
});

test("while start-up waits for another process's hold on the database, /healthz answers 200 and /readyz 503", async () => {
  const path = join(dir, "db.sqlite");
  const first = await openLibsqlStore({ url: `file:${path}` });
  await first.close();
  // Another process holding the write lock, as one upgrading a large database does, until told to stop.
  const holder = await holdWriteLock(path);
  const port = await freePort();
  child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CERTKEEPER_DATABASE_URL: `file:${path}`, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "warn", CERTKEEPER_LOG_FORMAT: "json", CERTKEEPER_DNS_SERVERS: "off" },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  void (async () => {
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) output += new TextDecoder().decode(chunk);
  })();
  const seen: Record<string, number | string> = {};
  try {
    const deadline = Date.now() + 5_000;
    while (Date.now() < deadline && seen.healthz !== 200) {
      seen.healthz = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => "refused");
      if (seen.healthz !== 200) await Bun.sleep(100);
    }
    seen.readyz = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => "refused");
    seen.stillRunning = child.exitCode === null ? "yes" : `exited ${child.exitCode}`;
    // Held long enough for the wait to be said (after 2 s).
    for (let i = 0; i < 100 && !output.includes("waiting for the database"); i++) await Bun.sleep(50);
  } finally {
    await holder.release();
  }
  // Once the lock is released, it starts and becomes ready: it was waiting, not broken.
  let ready: number | string = "refused";
  for (let i = 0; i < 100 && ready !== 200; i++) {
    ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => "refused");
    if (ready !== 200) await Bun.sleep(100);
  }
  expect({ ...seen, readyAfterRelease: ready } as Record<string, unknown>).toEqual({ healthz: 200, readyz: 503, stillRunning: "yes", readyAfterRelease: 200 });
  // The wait was said as it began, once, with how long it may last.
  const waits = output.split("\n").filter((line) => line.includes("waiting for the database")).map((line) => JSON.parse(line));
  expect(waits).toEqual([expect.objectContaining({ level: "warn", msg: "waiting for the database: another process holds it (upgrading it, or a long write), or it is slow to answer" })]);
  expect(waits[0].upToSeconds).toBeGreaterThan(590);
});

test("from its first answer on, /healthz answers every probe through the start but during the hand-over to the API, of milliseconds", async () => {
  const path = join(dir, "handover.sqlite");
  const port = await freePort();
  const server = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CERTKEEPER_DATABASE_URL: `file:${path}`, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "error", CERTKEEPER_DNS_SERVERS: "off" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const answers: Array<{ at: number; status: number | string }> = [];
  try {
    const deadline = Date.now() + 15_000;
    let api = false;
    while (!api && Date.now() < deadline) {
      // Eight probes at once, as several load balancers' and a liveness probe's.
      const round = await Promise.all(
        Array.from({ length: 8 }, () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => ({ at: performance.now(), status: r.status }), () => ({ at: performance.now(), status: "refused" }))),
      );
      if (answers.length > 0 || round.some((answer) => answer.status === 200)) answers.push(...round);
      api = (await fetch(`http://127.0.0.1:${port}/v1/openapi.json`).then((r) => r.status, () => 0)) === 200;
    }
    expect(api).toBe(true);
  } finally {
    server.kill("SIGKILL");
    await server.exited;
  }
  const first = answers.findIndex((answer) => answer.status === 200);
  expect(first).toBeGreaterThanOrEqual(0);
  const refused = answers.slice(first).filter((answer) => answer.status !== 200);
  expect(refused.every((answer) => answer.status === "refused")).toBe(true);
  // Only while Bun listens anew for the API: one window, well under the tenth of a second.
  const window = refused.length === 0 ? 0 : refused.at(-1)!.at - refused[0]!.at;
  expect(window).toBeLessThan(100);
});
