/**
 * A HEAD of a page without a session (link checkers, uptime probes, a browser's prefetch) is sent to
 * sign in as a GET is, not told that a form it never sent was not saved.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { SITE } from "./support/web_client.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords });
});
afterAll(async () => {
  await h?.close();
});

test("a HEAD of a page without a session is sent to sign in, not told that a form it never sent was not saved", async () => {
  const answer = await h.app.handle(new Request(`${SITE}/channels?mode=test`, { method: "HEAD", headers: { accept: "text/html" } }));
  expect(answer.status).toBe(303);
  expect(answer.headers.get("location")).not.toContain("notice=session-ended");
});
