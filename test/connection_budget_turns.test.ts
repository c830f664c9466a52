/**
 * ConnectionBudget's turns between parties: the party at the front of the line is served next, and a
 * smaller request of another party does not overtake it while it waits for connections to come back
 * (else a check behind many addresses would wait as long as small checks keep coming).
 */
import { expect, test } from "bun:test";
import { ConnectionBudget } from "../core/net/mod.ts";

test("a party waiting for 4 of 4 connections is not overtaken by another party's request for 1", async () => {
  const budget = new ConnectionBudget(4);
  const held1 = budget.tryAcquire(2, "x")!;
  const held2 = budget.tryAcquire(2, "x")!;
  expect(budget.free).toBe(0);
  const order: string[] = [];
  const big = budget.for("a").acquire(4).then((release) => (order.push("a"), release));
  const small = budget.for("b").acquire(1).then((release) => (order.push("b"), release));

  held1();
  // Two are free, not the four party a waits for: nobody is served, b included.
  expect(budget.free).toBe(2);
  await Promise.resolve();
  expect(order).toEqual([]);

  held2();
  const releaseBig = await big;
  expect(order).toEqual(["a"]);
  expect(budget.free).toBe(0);
  releaseBig();
  const releaseSmall = await small;
  expect(order).toEqual(["a", "b"]);
  releaseSmall();
  expect(budget.free).toBe(4);
});

test("a waiter that gives up lets the one behind it take the connections that are free", async () => {
  const budget = new ConnectionBudget(4);
  const held = budget.tryAcquire(3)!;
  const controller = new AbortController();
  const big = budget.acquire(4, controller.signal);
  big.catch(() => {});
  let smallGranted = false;
  const small = budget.acquire(1).then((release) => ((smallGranted = true), release));
  expect(budget.free).toBe(1);
  controller.abort(new Error("check cancelled"));
  // Given at once (the abort is handled synchronously), not at the next release.
  expect(budget.free).toBe(0);
  await expect(big).rejects.toThrow("check cancelled");
  // The one free connection goes to the waiter behind, without waiting for a release.
  const releaseSmall = await small;
  expect([smallGranted, budget.free]).toEqual([true, 0]);
  releaseSmall();
  held();
  expect(budget.free).toBe(4);
});

test("a signal already aborted is refused at once and leaves nothing in the line", async () => {
  const budget = new ConnectionBudget(2);
  const held = budget.tryAcquire(2)!;
  const waiting = budget.acquire(1, AbortSignal.abort(new Error("stopping")));
  waiting.catch(() => {});
  held();
  await expect(waiting).rejects.toThrow("stopping");
  expect(budget.free).toBe(2);
  expect(budget.tryAcquire(2)).not.toBeNull();
});
