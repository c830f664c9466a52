/**
 * Retry-After's HTTP-date forms are all GMT (RFC 9110 §5.6.7), asctime's too though it does not say
 * so: read in a process whose local time zone is 7 hours west, each form gives the same wait.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";

test("the three HTTP-date forms give the same wait whatever the local time zone", () => {
  const script = `
    import { retryAfterMs } from ${JSON.stringify(join(import.meta.dir, "../core/net/retry_after.ts"))};
    const now = Date.UTC(2031, 4, 1, 12, 0, 0);
    console.log(JSON.stringify(["Thu, 01 May 2031 12:02:00 GMT", "Thursday, 01-May-31 12:02:00 GMT", "Thu May  1 12:02:00 2031"].map((v) => retryAfterMs(v, now))));
  `;
  const child = Bun.spawnSync([process.execPath, "-e", script], { env: { ...process.env, TZ: "America/Los_Angeles" }, stdout: "pipe", stderr: "pipe" });
  expect(child.stderr.toString()).toBe("");
  expect(JSON.parse(child.stdout.toString())).toEqual([120_000, 120_000, 120_000]);
});
