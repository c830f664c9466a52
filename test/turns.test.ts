/**
 * Turns (core/base/turns.ts): heavy synchronous pieces (a new chain's parsing) run one per turn of
 * the event loop, so what else is ready (a delivery's answer, a request) runs between them.
 */
import { describe, expect, test } from "bun:test";
import { Turns } from "../core/base/turns.ts";

describe("Turns", () => {
  test("pieces taken at once run one per turn of the event loop, in order, with other work between them", async () => {
    const turns = new Turns();
    const log: string[] = [];
    // Other work: one step each turn (as a timer or an I/O callback would get).
    let ticking = true;
    const tick = () => {
      log.push("other");
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => turns.take(() => (log.push(`piece ${i}`), i * 10))));
    ticking = false;
    expect(results).toEqual([0, 10, 20, 30, 40]);
    const pieces = log.filter((entry) => entry !== "other");
    expect(pieces).toEqual(["piece 0", "piece 1", "piece 2", "piece 3", "piece 4"]);
    // Between any two pieces the other work had its turn.
    const at = pieces.map((piece) => log.indexOf(piece));
    for (let i = 1; i < at.length; i++) expect(log.slice(at[i - 1]! + 1, at[i]!)).toContain("other");
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
