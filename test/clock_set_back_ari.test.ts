/**
 * Renewal information (RFC 9773) after the wall clock is set back (NTP correcting a clock that ran a
 * day ahead). The next question is a wall-clock moment (the answer's Retry-After after it came, kept in
 * the certificate and in the shared cache): on the corrected clock it lies a day further ahead than the
 * CA asked. The CA is asked again at the next check instead, and the new answer holds as usual; a CA
 * that stopped answering is left alone for its quiet minute, not a day. The CA's ARI service is real
 * HTTPS on loopback; `now` is the clock each call is made at.
 */
import { expect, test } from "bun:test";
import { DAY, HOUR, MINUTE } from "../core/base/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { ariClients } from "./support/ari_clients.ts";

/** Long enough for a first request on a loaded machine; the hanging CA of the last test waits it out once. */
const TIMEOUT_MS = 1500;
const { ari, client, leafOf, asked } = ariClients(TIMEOUT_MS);

test("an answer received on a clock since set back a day is asked again at once; the new answer holds its Retry-After", async () => {
  const { leaf } = await leafOf("stepped.ari.certkeeper.test");
  const t0 = Date.now();
  ari().answer(leaf.certId, { kind: "window", start: t0 + 50 * DAY, end: t0 + 52 * DAY, retryAfter: "21600" });
  const cache = createMemoryStore().renewalInfo;
  const ca = client(cache);
  const first = await ca.renewalInfo(leaf, null, t0);
  expect(asked(leaf.certId)).toBe(1);
  // An hour later, within its six hours: not asked.
  expect(await ca.renewalInfo(leaf, first, t0 + HOUR)).toEqual(first);
  expect(asked(leaf.certId)).toBe(1);

  // The clock set back a day: the answer (the certificate's and the cache's) says "received tomorrow".
  const stepped = t0 - DAY;
  const again = await ca.renewalInfo(leaf, first, stepped);
  expect(asked(leaf.certId)).toBe(2);
  expect(again!.checkedAt).toBe(stepped);
  expect(again!.nextAt).toBe(stepped + 6 * HOUR);
  // Another process reading the shared cache after the step: the new answer, not asked again.
  expect((await client(cache, "proc_b").renewalInfo(leaf, null, stepped + MINUTE))!.checkedAt).toBe(stepped);
  expect(await ca.renewalInfo(leaf, again, stepped + HOUR)).toEqual(again);
  expect(asked(leaf.certId)).toBe(2);
  // And six hours on the corrected clock, as the CA asked.
  await ca.renewalInfo(leaf, again, stepped + 6 * HOUR + 1);
  expect(asked(leaf.certId)).toBe(3);
});

test("a next question further ahead than any is set (written on a clock since set back) is asked at once; a step back of minutes is not", async () => {
  const { leaf } = await leafOf("far.ari.certkeeper.test");
  const t0 = Date.now();
  ari().answer(leaf.certId, { kind: "window", start: t0 + 50 * DAY, end: t0 + 52 * DAY, retryAfter: "86400" });
  const ca = client(createMemoryStore().renewalInfo);
  const first = await ca.renewalInfo(leaf, null, t0);
  expect(first!.nextAt).toBe(t0 + DAY);
  // Five minutes back (clocks of processes a little apart): the answer holds.
  expect(await ca.renewalInfo(leaf, first, t0 - 5 * MINUTE)).toEqual(first);
  expect(asked(leaf.certId)).toBe(1);
  // A failure waits 6 hours: one kept with its next question a day and a half ahead was written on a
  // clock since set back (a failure keeps the last good answer's checkedAt, not its own moment).
  const failed = { ...first!, nextAt: t0 + 1.5 * DAY, lastError: "the CA answered HTTP 500" };
  // (A process of its own database: the shared cache above still holds the good answer.)
  await client(createMemoryStore().renewalInfo).renewalInfo(leaf, failed, t0);
  expect(asked(leaf.certId)).toBe(2);
});

test("a CA left alone for a quiet minute after a time-out is asked again after that minute on the corrected clock, not a day later", async () => {
  const { leaf: quiet } = await leafOf("quiet.ari.certkeeper.test");
  const t0 = Date.now();
  ari().answer(quiet.certId, { kind: "hang" });
  const ca = client(createMemoryStore().renewalInfo);
  const timedOut = await ca.renewalInfo(quiet, null, t0);
  expect(timedOut!.lastError).not.toBeNull();
  expect(asked(quiet.certId)).toBe(1);
  // Another leaf of the same CA within the minute: not asked (the CA is quiet).
  const { leaf: other } = await leafOf("other.ari.certkeeper.test");
  ari().answer(other.certId, { kind: "window", start: t0 + 50 * DAY, end: t0 + 52 * DAY, retryAfter: "21600" });
  const held = await ca.renewalInfo(other, null, t0 + 1000);
  expect(asked(other.certId)).toBe(0);
  expect(held!.lastError).toContain("not asked again for a minute");
  // The clock set back a day: the quiet minute ended (it would otherwise last a day and a minute).
  const answered = await ca.renewalInfo(other, held, t0 - DAY + 2 * MINUTE);
  expect(asked(other.certId)).toBe(1);
  expect(answered!.lastError).toBeNull();
});

test("correct clock: a check that read the clock a second before the time-out's does not ask the CA during its quiet minute", async () => {
  const { leaf: quiet } = await leafOf("quiet2.ari.certkeeper.test");
  const t0 = Date.now();
  ari().answer(quiet.certId, { kind: "hang" });
  const ca = client(createMemoryStore().renewalInfo);
  expect((await ca.renewalInfo(quiet, null, t0))!.lastError).not.toBeNull();
  // Another leaf of that CA, whose check (running beside the one that timed out) read the clock a
  // second earlier and reaches renewal information only now, within the quiet minute.
  const { leaf: other } = await leafOf("beside.ari.certkeeper.test");
  ari().answer(other.certId, { kind: "window", start: t0 + 50 * DAY, end: t0 + 52 * DAY, retryAfter: "21600" });
  const held = await ca.renewalInfo(other, null, t0 - 1000);
  expect({ asked: asked(other.certId), lastError: held!.lastError }).toEqual({ asked: 0, lastError: expect.stringContaining("not asked again for a minute") });
});

test("after a step back of a day, a leaf another process asked about on the clock ahead is asked at once, not after waiting out its claim", async () => {
  const { leaf } = await leafOf("claimed.ari.certkeeper.test");
  const t0 = Date.now();
  ari().answer(leaf.certId, { kind: "window", start: t0 + 50 * DAY, end: t0 + 52 * DAY, retryAfter: "21600" });
  const cache = createMemoryStore().renewalInfo;
  // Process A (its clock a day ahead) asks; then NTP sets the clock back a day.
  await client(cache, "proc_a").renewalInfo(leaf, null, t0);
  expect(asked(leaf.certId)).toBe(1);
  const stepped = t0 - DAY;
  // Process B (or A restarted: a new owner) checks the leaf.
  const started = performance.now();
  const again = await client(cache, "proc_b").renewalInfo(leaf, null, stepped);
  const waitedMs = performance.now() - started;
  expect(again!.checkedAt).toBe(stepped);
  expect(asked(leaf.certId)).toBe(2);
  // A loopback answer takes milliseconds; waiting out the claim, 2 × 1.5 s + 1 s.
  expect(waitedMs).toBeLessThan(1500);
});
