/**
 * Turns (core/base/turns.ts): heavy synchronous pieces (a new chain's parsing) run a few
 * milliseconds' worth per turn of the event loop, so what else is ready (a delivery's answer, a
 * request) runs between turns' worth of them.
 */
import { describe, expect, test } from "bun:test";
import { Turns } from "../core/base/turns.ts";

describe("Turns", () => {
  test("pieces taken at once run a few milliseconds' worth per turn, in order, with other work between turns", async () => {
    const turns = new Turns(4);
    const log: string[] = [];
    // Other work: one step each turn (as a timer or an I/O callback would get).
    let ticking = true;
    const tick = () => {
      log.push("other");
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    /** A piece of about 3 ms of CPU. */
    const piece = (i: number) => () => {
      const until = performance.now() + 3;
      while (performance.now() < until);
      log.push(`piece ${i}`);
      return i * 10;
    };
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => turns.take(piece(i))));
    ticking = false;
    expect(results).toEqual([0, 10, 20, 30, 40, 50]);
    expect(log.filter((entry) => entry !== "other")).toEqual(["piece 0", "piece 1", "piece 2", "piece 3", "piece 4", "piece 5"]);
    // At most two 3 ms pieces in a turn of a 4 ms budget: the other work ran between every two.
    const runs = log.join(",").split("other").map((run) => run.split(",").filter(Boolean).length);
    expect(Math.max(...runs)).toBeLessThanOrEqual(2);
    expect(runs.filter((n) => n > 0).length).toBeGreaterThanOrEqual(3);
  });

  test("small pieces run at once, all in the turn that takes them", async () => {
    // A budget no busy machine's pause between two of them uses up (with 4 ms, a test process
    // descheduled for 4 ms beside the rest of the suite sent the rest to the next turn).
    const turns = new Turns(1_000);
    const ran: number[] = [];
    const taken = Array.from({ length: 20 }, (_, i) => turns.take(() => ran.push(i)));
    // Synchronously: nothing waited for a turn.
    expect(ran).toHaveLength(20);
    await Promise.all(taken);
  });

  test("a piece that throws passes its error on and lets the next one run", async () => {
    const turns = new Turns();
    const failed = turns.take(() => {
      throw new Error("unparsable");
    });
    const next = turns.take(() => "parsed");
    await expect(failed).rejects.toThrow("unparsable");
    expect(await next).toBe("parsed");
    // Idle again: a later piece runs at once.
    expect(await turns.take(() => "later")).toBe("later");
  });
});
