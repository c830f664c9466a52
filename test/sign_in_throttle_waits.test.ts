/**
 * The sign-in slowdown at its edges (docs/settings.md, "Sign-in slowdown"): the wait doubles up to 15
 * minutes and no further; Retry-After never says less than the wait left; a successful sign-in forgets
 * its email's count but not the client address's.
 */
import { expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness } from "./support/harness.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { listening, WebClient } from "./support/web_client.ts";
import { PASSWORD, signedInUser } from "./support/web_users.ts";
import { HOUR, SECOND } from "../core/base/time.ts";

test("per email, the wait doubles after each failure up to 15 minutes, and stays there", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  try {
    const { email } = await signedInUser(timed, "owner");
    const attempt = (password: string) => new WebClient(timed.app).signIn(email, password);
    for (let i = 0; i < 5; i++) expect((await attempt("wrong password!")).status).toBe(401);
    const waits: string[] = [];
    for (let failures = 5; failures < 16; failures++) {
      const held = await attempt(PASSWORD);
      expect(held.status).toBe(429);
      const seconds = held.headers.get("retry-after")!;
      waits.push(seconds);
      clock.advance(Number(seconds) * SECOND);
      expect((await attempt("wrong password!")).status).toBe(401);
    }
    expect(waits).toEqual(["2", "4", "8", "16", "32", "64", "128", "256", "512", "900", "900"]);
    const held = await attempt(PASSWORD);
    expect({ status: held.status, retryAfter: held.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "900" });
    expect(held.text).toContain("Wait 900 seconds");
  } finally {
    await timed.close();
  }
});

test("Retry-After rounds the wait left up: 1.5 s left is said as 2 seconds, never as less than the wait", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  try {
    const { email } = await signedInUser(timed, "owner");
    const attempt = (password: string) => new WebClient(timed.app).signIn(email, password);
    for (let i = 0; i < 5; i++) expect((await attempt("wrong password!")).status).toBe(401);
    clock.advance(500);
    const held = await attempt(PASSWORD);
    expect({ status: held.status, retryAfter: held.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "2" });
    expect(held.text).toContain("Wait 2 seconds");
    clock.advance(1400);
    const still = await attempt(PASSWORD);
    expect({ status: still.status, retryAfter: still.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "1" });
    expect(still.text).toContain("Wait 1 second,");
  } finally {
    await timed.close();
  }
});

test("a good sign-in from an address does not forget that address's failures: a guesser's count goes on", async () => {
  const clock = new FakeClock(Date.UTC(2031, 0, 1));
  const timed = await createHarness({ passwords: quickPasswords, clock });
  // Over real HTTP on 127.0.0.1: the peer is loopback, so X-Forwarded-For names the client.
  const server = listening(timed.app);
  try {
    const { email } = await signedInUser(timed, "owner");
    const from = { "x-forwarded-for": "192.0.2.77" };
    for (let i = 0; i < 19; i++) {
      expect((await server.browser().signIn(`guess-${i}@acme.test`, "wrong password!", from)).status).toBe(401);
    }
    // One good account signs in from the same address.
    expect((await server.browser().signIn(email, PASSWORD, from)).status).toBe(303);
    // The 20th failure from that address: the next attempt, any email, must wait.
    expect((await server.browser().signIn("guess-last@acme.test", "wrong password!", from)).status).toBe(401);
    const held = await server.browser().signIn(email, PASSWORD, from);
    expect({ status: held.status, retryAfter: held.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: "2" });
    clock.advance(HOUR);
    expect((await server.browser().signIn(email, PASSWORD, from)).status).toBe(303);
  } finally {
    await server.close();
    await timed.close();
  }
});
