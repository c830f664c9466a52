/**
 * The background work loop's grouped last steps (core/base/work_loop.ts): an item that hands back its
 * last step frees its slot at once; the steps handed back are taken together, in one turn of the event
 * loop, when the group is full, when its wait is over, or when nothing else is running; runDue() and
 * stop() wait for them; a failing step is logged and does not stop the loop.
 */
import { describe, expect, test } from "bun:test";
import { createLogger, systemClock, WorkLoop, type LastStep, type WorkSource } from "../core/base/mod.ts";

interface World {
  loop: WorkLoop<number>;
  /** Item number → the event-loop turn its last step ran in. */
  stepTurns: Map<number, number>;
  /** The order things happened in: "start N", "step N". */
  log: string[];
  errors: string[];
  due: number[];
  /** Releases item N's run. */
  finish(n: number): void;
}

let turn = 0;
// A counter that moves once per macrotask: steps run in the same turn share a number.
const ticker = setInterval(() => turn++, 0);
ticker.unref();

function world(options: { concurrency: number; group?: { size: number; waitMs: number }; failStep?: number }): World {
  const stepTurns = new Map<number, number>();
  const log: string[] = [];
  const errors: string[] = [];
  const due: number[] = [];
  const release = new Map<number, () => void>();
  const source: WorkSource<number> = {
    claim: async (limit) => due.splice(0, limit),
    nextDueAt: async () => (due.length > 0 ? 0 : null),
    run: async (n): Promise<LastStep> => {
      log.push(`start ${n}`);
      await new Promise<void>((resolve) => release.set(n, resolve));
      return async () => {
        stepTurns.set(n, turn);
        log.push(`step ${n}`);
        if (n === options.failStep) throw new Error(`step ${n} broke`);
        // A save takes a while: waiting for the steps means waiting for this, not only their start.
        await Bun.sleep(20);
        log.push(`saved ${n}`);
      };
    },
    describe: (n) => ({ item: n }),
  };
  const logger = createLogger("error", (line) => errors.push(line));
  const loop = new WorkLoop(source, { name: "test", clock: systemClock, logger, concurrency: options.concurrency, pollMs: 20, group: options.group });
  return { loop, stepTurns, log, errors, due, finish: (n) => release.get(n)?.() };
}

const until = async (condition: () => boolean) => {
  const deadline = Date.now() + 3_000;
  while (!condition() && Date.now() < deadline) await Bun.sleep(2);
  expect(condition()).toBe(true);
};

describe("grouped last steps", () => {
  test("an item's slot is free as soon as it hands back its step; the steps gathered are taken together once the group is full", async () => {
    const w = world({ concurrency: 3, group: { size: 3, waitMs: 10_000 } });
    w.due.push(1, 2, 3, 4);
    w.loop.start();
    await until(() => w.log.includes("start 3"));
    w.finish(1);
    // Item 1's slot went to item 4 while its step waits for the group.
    await until(() => w.log.includes("start 4"));
    w.finish(2);
    await Bun.sleep(20);
    expect(w.stepTurns.size).toBe(0);
    w.finish(3);
    await until(() => w.stepTurns.size === 3);
    expect(new Set([1, 2, 3].map((n) => w.stepTurns.get(n))).size).toBe(1);
    expect(w.log.includes("step 4")).toBe(false);
    w.finish(4);
    // Nothing else running: item 4's step is taken without waiting out the group's 10 s.
    await until(() => w.log.includes("step 4"));
    await w.loop.stop();
  });

  test("runDue() returns once every step it handed back has been taken", async () => {
    const w = world({ concurrency: 2, group: { size: 10, waitMs: 10_000 } });
    w.due.push(1, 2, 3);
    const running = w.loop.runDue();
    for (const n of [1, 2, 3]) {
      await until(() => w.log.includes(`start ${n}`));
      w.finish(n);
    }
    expect(await running).toBe(3);
    expect(w.log.filter((entry) => entry.startsWith("saved")).sort()).toEqual(["saved 1", "saved 2", "saved 3"]);
  });

  test("a partial group is taken when its wait is over, while other items still run", async () => {
    const w = world({ concurrency: 2, group: { size: 10, waitMs: 30 } });
    w.due.push(1, 2);
    const running = w.loop.runDue();
    await until(() => w.log.includes("start 2"));
    w.finish(1);
    const finishedAt = performance.now();
    await until(() => w.stepTurns.has(1));
    expect(performance.now() - finishedAt).toBeGreaterThanOrEqual(25);
    expect(w.log.includes("step 2")).toBe(false); // item 2 is still running
    w.finish(2);
    await running;
    expect([...w.stepTurns.keys()].sort()).toEqual([1, 2]);
  });

  test("without a group each step is taken as soon as it is handed back", async () => {
    const w = world({ concurrency: 2 });
    w.due.push(1, 2);
    const running = w.loop.runDue();
    await until(() => w.log.includes("start 2"));
    w.finish(1);
    await until(() => w.stepTurns.has(1));
    expect(w.log.includes("step 2")).toBe(false);
    w.finish(2);
    await running;
  });

  test("stop() waits for held steps; a failing step is logged and the others are taken", async () => {
    const w = world({ concurrency: 3, group: { size: 10, waitMs: 10_000 }, failStep: 2 });
    w.due.push(1, 2, 3);
    w.loop.start();
    await until(() => w.log.includes("start 3"));
    w.finish(1);
    w.finish(2);
    await Bun.sleep(20);
    expect(w.log.includes("step 1")).toBe(false); // held for the group
    const stopped = w.loop.stop();
    w.finish(3);
    await stopped;
    // Every step was taken and finished before stop() returned; item 2's failed.
    expect(w.log.filter((entry) => entry.startsWith("saved")).sort()).toEqual(["saved 1", "saved 3"]);
    expect(w.errors.some((line) => line.includes("step 2 broke"))).toBe(true);
  });
});

describe("claims at saturation", () => {
  /** Items due at given times; runs finish at once. Counts the source's calls. */
  function timed(concurrency: number, pollMs: number) {
    const pending: { n: number; dueAt: number }[] = [];
    const ran: { n: number; at: number }[] = [];
    const calls = { claim: 0, nextDueAt: 0 };
    const source: WorkSource<number> = {
      claim: async (limit, now) => {
        calls.claim++;
        pending.sort((a, b) => a.dueAt - b.dueAt);
        const due = pending.filter((item) => item.dueAt <= now).slice(0, limit);
        for (const item of due) pending.splice(pending.indexOf(item), 1);
        return due.map((item) => item.n);
      },
      nextDueAt: async () => {
        // Counted while work is waiting: once all is done, every slot freeing asks again, as it should.
        if (pending.length > 0) calls.nextDueAt++;
        return pending.length === 0 ? null : Math.min(...pending.map((item) => item.dueAt));
      },
      run: async (n) => {
        ran.push({ n, at: Date.now() });
        await Bun.sleep(1);
      },
      describe: (n) => ({ item: n }),
    };
    const loop = new WorkLoop(source, { name: "test", clock: systemClock, logger: createLogger("error", () => {}), concurrency, pollMs, prefetch: concurrency });
    return { loop, pending, ran, calls };
  }

  test("after a full claim the next claim is made without first asking when work is due", async () => {
    const w = timed(4, 10_000);
    for (let n = 0; n < 200; n++) w.pending.push({ n, dueAt: 0 });
    w.loop.start();
    await until(() => w.ran.length === 200);
    await w.loop.stop();
    expect(w.calls.claim).toBeGreaterThan(20);
    // Asked before the first claim only, not once per claim.
    expect(w.calls.nextDueAt).toBe(1);
  });

  test("items falling due one at a time: each is claimed when its time comes without asking again, and none early", async () => {
    const w = timed(4, 10_000);
    const start = Date.now() + 50;
    for (let n = 0; n < 10; n++) w.pending.push({ n, dueAt: start + n * 40 });
    w.loop.start();
    await until(() => w.ran.length === 10);
    await w.loop.stop();
    for (const { n, at } of w.ran) expect(at).toBeGreaterThanOrEqual(start + n * 40);
    expect(w.ran.map((r) => r.n)).toEqual([...Array(10).keys()]);
    // About one question per item (when is the next one due), not one more at its time.
    expect(w.calls.nextDueAt).toBeLessThanOrEqual(13);
  });

  test("with prefetch, the next claim goes out while claimed items still wait, and memory holds at most prefetch and half a round more", async () => {
    // A claim answers after 30 ms (a database under load), an item takes 5: claiming only once every
    // claimed item had started would leave the slots empty for most of each claim's round trip.
    const concurrency = 4;
    const prefetch = 8;
    const due = Array.from({ length: 120 }, (_, n) => n);
    let started = 0;
    let claimed = 0;
    const waitingAtClaim: number[] = [];
    let mostWaiting = 0;
    const source: WorkSource<number> = {
      claim: async (limit) => {
        waitingAtClaim.push(claimed - started);
        await Bun.sleep(30);
        const items = due.splice(0, limit);
        claimed += items.length;
        mostWaiting = Math.max(mostWaiting, claimed - started);
        return items;
      },
      nextDueAt: async () => (due.length > 0 ? 0 : null),
      run: async () => {
        started++;
        await Bun.sleep(5);
      },
      describe: (n) => ({ item: n }),
    };
    const loop = new WorkLoop(source, { name: "test", clock: systemClock, logger: createLogger("error", () => {}), concurrency, pollMs: 10_000, prefetch });
    loop.start();
    await until(() => started === 120);
    await loop.stop();
    // The first claim finds nothing in memory; every later one while claimed items were still waiting.
    expect(waitingAtClaim[0]).toBe(0);
    const later = waitingAtClaim.slice(1, -1);
    expect(later.length).toBeGreaterThan(5);
    for (const waiting of later) expect(waiting).toBeGreaterThan(0);
    // The first claim's (a claim for every slot and prefetch); later ones ask for prefetch more with
    // at most the low-water mark (half of min(prefetch, concurrency)) still waiting.
    expect(mostWaiting).toBeLessThanOrEqual(concurrency + prefetch);
  });

  test("stop() during a claim starts none of the claimed items still waiting, nor what the claim brings", async () => {
    const due = Array.from({ length: 200 }, (_, n) => n);
    let started = 0;
    let claims = 0;
    let startedAtStop: number | undefined;
    let stopped: Promise<void> | undefined;
    const source: WorkSource<number> = {
      claim: async (limit) => {
        // The third claim goes out with items still waiting (the low-water mark): stop now.
        if (++claims === 3) {
          startedAtStop = started;
          stopped = loop.stop();
        }
        await Bun.sleep(30);
        return due.splice(0, limit);
      },
      nextDueAt: async () => (due.length > 0 ? 0 : null),
      run: async () => {
        started++;
        await Bun.sleep(5);
      },
      describe: (n) => ({ item: n }),
    };
    const loop = new WorkLoop(source, { name: "test", clock: systemClock, logger: createLogger("error", () => {}), concurrency: 4, pollMs: 10_000, prefetch: 8 });
    loop.start();
    await until(() => stopped !== undefined);
    await stopped;
    expect(startedAtStop).toBeGreaterThan(0);
    expect(started).toBe(startedAtStop!);
    await Bun.sleep(50);
    expect(started).toBe(startedAtStop!);
  });

  test("when a claim made on that guess finds nothing, the loop still wakes for the next item's time, not the poll's", async () => {
    const w = timed(1, 10_000);
    // Two items fill the first claim (a slot and one prefetched): once both are done, with nothing left
    // running to wake the loop, the next claim is made on the guess and finds nothing.
    for (let n = 0; n < 2; n++) w.pending.push({ n, dueAt: 0 });
    const later = Date.now() + 300;
    w.pending.push({ n: 99, dueAt: later });
    w.loop.start();
    await until(() => w.ran.some((r) => r.n === 99));
    await w.loop.stop();
    const at = w.ran.find((r) => r.n === 99)!.at;
    expect(at).toBeGreaterThanOrEqual(later);
    expect(at - later).toBeLessThan(1_000);
  });
});
