/**
 * Check threads (adapters/check_threads), the failure modes a user would see: a check the thread could
 * not make (a defect, not the server's doing), a process whose last work is a thread's check, a stuck
 * thread's end, the pause before a failed thread is replaced and the grace a late thread gets, all by
 * default. Real TLS servers on 127.0.0.1, servers that never answer.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, startSilentServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { until } from "./support/until.ts";
import { CheckThreads } from "../adapters/check_threads/mod.ts";
import type { EndpointsRequest } from "../core/tls/mod.ts";
import { preciseNow } from "../core/net/mod.ts";
import { createLogger } from "../core/base/mod.ts";

const DOMAIN = `thread-checks.${TEST_DOMAIN}`;
let port: number;
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], daysLeft: 90 });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  port = server.port;
  closers.push(() => server.close());
});

afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

function threadsFor(size: number, options?: ConstructorParameters<typeof CheckThreads>[1]): CheckThreads {
  const threads = new CheckThreads(size, options);
  closers.push(() => threads.close());
  return threads;
}

/** A server that accepts connections and never says a word. */
async function silentServer(): Promise<number> {
  const server = await startSilentServer();
  closers.push(() => server.close());
  return server.port;
}

const one = (targetPort: number, ms: number): EndpointsRequest => ({
  addresses: [{ address: "127.0.0.1", family: 4 }],
  host: DOMAIN,
  domain: DOMAIN,
  port: targetPort,
  protocol: "tls",
  dueAt: preciseNow() + ms,
});

function checkThreadsAlive(): Set<string> {
  return new Set(
    readdirSync("/proc/self/task").filter((tid) => {
      try {
        return readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim() === "ck-check";
      } catch {
        return false;
      }
    }),
  );
}

describe("check threads: what a user sees when a thread misbehaves", () => {
  test("a check the thread could not make fails on every address as tls_error, saying certkeeper's log has the cause, and the log names the target", async () => {
    const errors: string[] = [];
    const threads = threadsFor(1, { logger: createLogger("error", (line) => errors.push(line)) });
    const silent = await silentServer();
    // The first check holds the event loop's share; the second, which no connection can be made for
    // (a port out of range makes the connecting code throw: a defect, not a server's answer), goes to the thread.
    const onLoop = threads.connect(one(silent, 500));
    const onThread = threads.connect(one(70_000, 2_000));
    expect(threads.handed).toEqual({ eventLoop: 1, threads: 1 });
    expect(await onThread).toEqual([
      { address: "127.0.0.1", ok: false, reason: "tls_error", message: `${DOMAIN}:70000 (127.0.0.1): the check could not be made (certkeeper's log has the cause)` },
    ]);
    await onLoop;
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("a check thread could not make a check");
    expect(errors[0]).toContain(`${DOMAIN}:70000`);
    // The thread is not taken for broken: it is still there for the next checks.
    expect(threads.running).toBe(1);
  });

  test("a process whose last work is a check on a thread waits for its answer before exiting", async () => {
    const silent = await silentServer();
    const script = `
      import { CheckThreads } from ${JSON.stringify(new URL("../adapters/check_threads/mod.ts", import.meta.url).pathname)};
      const threads = new CheckThreads(1);
      const request = (port, ms) => ({ addresses: [{ address: "127.0.0.1", family: 4 }], host: "${DOMAIN}", domain: "${DOMAIN}", port, protocol: "tls", dueAt: performance.timeOrigin + performance.now() + ms });
      // The event loop's check ends at once; the thread's waits 1.5 s for a server that never answers.
      const results = await Promise.all([threads.connect(request(${port}, 5000)), threads.connect(request(${silent}, 1500))]);
      console.log(JSON.stringify({ results: results.map(([r]) => [r.ok, r.reason ?? null]), handed: threads.handed }));
    `;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const exited = await Promise.race([child.exited, Bun.sleep(10_000).then(() => "still running")]);
    if (exited === "still running") child.kill();
    expect(exited).toBe(0);
    expect(JSON.parse(await new Response(child.stdout).text())).toEqual({
      results: [
        [true, null],
        [false, "timeout"],
      ],
      handed: { eventLoop: 1, threads: 1 },
    });
  }, 15_000);

  test("a stuck thread that is ended is gone from the process, not left running beside its replacement", async () => {
    const before = checkThreadsAlive();
    const threads = threadsFor(1, {
      script: new URL("./support/check_threads/silent.ts", import.meta.url),
      answerGraceMs: 100,
      sweepMs: 25,
      restartAfterMs: 60_000,
    });
    const silent = await silentServer();
    const onLoop = threads.connect(one(silent, 300));
    const onThread = threads.connect(one(silent, 300));
    const stuckTids = await until("the stuck thread running", async () => {
      const started = [...checkThreadsAlive()].filter((tid) => !before.has(tid));
      return started.length > 0 ? started : null;
    });
    expect(await onThread).toEqual([expect.objectContaining({ ok: false, reason: "timeout" })]);
    await onLoop;
    expect(threads.running).toBe(0);
    await until("the stuck thread gone", async () => (stuckTids.every((tid) => !checkThreadsAlive().has(tid)) ? true : null), 3_000);
  });

  test("by default a failed thread is not replaced at once: the next checks open on the event loop and read their chains", async () => {
    const errors: string[] = [];
    const threads = threadsFor(1, {
      script: new URL("./support/check_threads/failing.ts", import.meta.url),
      logger: createLogger("error", (line) => errors.push(line)),
    });
    const first = await Promise.all([threads.connect(one(port, 5_000)), threads.connect(one(port, 5_000))]);
    // The thread's check was made again on the event loop once the thread failed.
    expect(threads.handed).toEqual({ eventLoop: 2, threads: 1 });
    for (const result of first) expect(result.every((r) => r.ok)).toBe(true);
    expect(errors).toHaveLength(1);
    // Within the default 5 s pause: no new thread, however many checks come at once.
    const next = await Promise.all([threads.connect(one(port, 5_000)), threads.connect(one(port, 5_000)), threads.connect(one(port, 5_000))]);
    expect(threads.handed).toEqual({ eventLoop: 5, threads: 1 });
    for (const result of next) expect(result.every((r) => r.ok)).toBe(true);
    expect(errors).toHaveLength(1);
  });

  test("by default a thread that answers a little after a check's limit is not ended as stuck: its answer counts", async () => {
    const errors: string[] = [];
    const threads = threadsFor(1, {
      script: new URL("./support/check_threads/late_answer.ts", import.meta.url),
      sweepMs: 20,
      logger: createLogger("error", (line) => errors.push(line)),
    });
    const silent = await silentServer();
    const onLoop = threads.connect(one(silent, 300));
    // A chain read within the limit, handed back 300 ms after it.
    const onThread = threads.connect(one(port, 500));
    expect(threads.handed).toEqual({ eventLoop: 1, threads: 1 });
    expect((await onThread).map((r) => r.ok)).toEqual([true]);
    await onLoop;
    expect(errors).toEqual([]);
    expect(threads.running).toBe(1);
  });

  test("a size below 1 is refused when the threads are made", () => {
    expect(() => new CheckThreads(0)).toThrow(RangeError);
    expect(() => new CheckThreads(1.5)).toThrow(RangeError);
  });
});
