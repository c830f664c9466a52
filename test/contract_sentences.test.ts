/**
 * Sentences of the contract the code implements and no other test held (an audit's list):
 *
 * - §19: the directory's `renewalInfo` URL is cached up to 24 hours: the ACME directory is read once,
 *   not again within 24 hours of checks, and read again after them.
 * - §19: CERTKEEPER_ACME_DIRECTORIES names are compared case-insensitively with the issuer's O and CN.
 * - §23: `org update --rate-limit N` applies from the next request (§8's per-key limit), raised or
 *   lowered, with the CLI as a real process on the server's database and nothing restarted.
 *
 * Real parts: the CA's ARI service over HTTPS on loopback (test/support/ari_server.ts), TLS servers
 * serving leaves of the test CA, a libSQL database file, the CLI as a process. The clock is a FakeClock
 * started at the real time, so the servers' real certificates stay valid while the test moves time.
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import "reflect-metadata";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { configFromEnv } from "../core/config/mod.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { messagesOf, runCli } from "./support/cli.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world, served, cleanups } = worlds;
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

async function add(h: Harness, domain: string, port: number): Promise<any> {
  return expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
}

async function check(h: Harness, id: string): Promise<any> {
  return expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
}

const directoryReads = () => ari.requests.filter((r) => r.path === "/acme/directory").length;
const asked = (certId: string) => ari.requests.filter((r) => r.certId === certId).length;
const iso = (ms: number) => new Date(ms).toISOString();
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

describe("§19 ACME directories", () => {
  test("the directory's renewalInfo URL is kept 24 hours: read once, not again at the checks within 24 hours, read again at 24 hours", async () => {
    const w = await world();
    const domain = `directory-day.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain);
    const start = whole(Date.now() + 45 * DAY);
    // Retry-After of a minute: the CA is asked at every check below, each time needing the renewalInfo URL.
    ari.answer(certIdOf(leaf), { kind: "window", start, end: start + DAY, retryAfter: "60" });
    const readsBefore = directoryReads();
    const added = await add(w.h, domain, server.port);
    const t0 = w.clock.now();
    expect({ directoryReads: directoryReads() - readsBefore, asked: asked(certIdOf(leaf)) }).toEqual({ directoryReads: 1, asked: 1 });

    let expectedAsks = 1;
    for (const at of [2 * MINUTE, 6 * HOUR, 12 * HOUR, 24 * HOUR - MINUTE]) {
      w.clock.set(t0 + at);
      const checked = await check(w.h, added.id);
      expectedAsks++;
      expect({ at, directoryReads: directoryReads() - readsBefore, asked: asked(certIdOf(leaf)), source: checked.renewal.source }).toEqual({
        at,
        directoryReads: 1,
        asked: expectedAsks,
        source: "ari",
      });
    }
    // A second leaf first seen a second before the day is out: its renewalInfo URL still comes from memory.
    const otherDomain = `directory-day-2.${TEST_DOMAIN}`;
    const other = await served(otherDomain);
    ari.answer(certIdOf(other.leaf), { kind: "window", start, end: start + DAY });
    w.clock.set(t0 + 24 * HOUR - SECOND);
    const second = await add(w.h, otherDomain, other.server.port);
    const secondGot = expectData(await w.h.request("GET", `/v1/certificates/${second.id}`), 200);
    expect({ directoryReads: directoryReads() - readsBefore, asked: asked(certIdOf(other.leaf)), source: secondGot.renewal.source }).toEqual({ directoryReads: 1, asked: 1, source: "ari" });

    // 24 hours after the directory was read, the next request for renewal information reads it again.
    w.clock.set(t0 + 24 * HOUR);
    const checked = await check(w.h, added.id);
    expect({ directoryReads: directoryReads() - readsBefore, asked: asked(certIdOf(leaf)), source: checked.renewal.source, deadline: checked.renewal.deadline }).toEqual({
      directoryReads: 2,
      asked: expectedAsks + 1,
      source: "ari",
      deadline: iso(start + DAY),
    });
  });

  test("a directory named in another case than the issuer's CN or O (CERTKEEPER TEST RSA CA, CERTKEEPER Intermediates) still gives the CA's window", async () => {
    for (const name of ["CERTKEEPER TEST RSA CA", "CERTKEEPER Intermediates"]) {
      // As the operator writes it in the environment.
      const { acmeDirectories } = configFromEnv({ CERTKEEPER_ACME_DIRECTORIES: `${name}=${ari.directoryUrl}` });
      expect(acmeDirectories[0]).toEqual({ issuer: name, url: ari.directoryUrl });
      const w = await world({ acmeDirectories });
      const domain = `case-${name.split(" ")[1]!.toLowerCase()}.${TEST_DOMAIN}`;
      const { leaf, server } = await served(domain);
      const start = whole(Date.now() + 45 * DAY);
      ari.answer(certIdOf(leaf), { kind: "window", start, end: start + 2 * DAY });
      const added = await add(w.h, domain, server.port);
      const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
      expect({ name, asked: asked(certIdOf(leaf)), source: got.renewal.source, window: got.renewal.window, deadline: got.renewal.deadline }).toEqual({
        name,
        asked: 1,
        source: "ari",
        window: { start: iso(start), end: iso(start + 2 * DAY) },
        deadline: iso(start + 2 * DAY),
      });
    }
  });
});

describe("§23 org update --rate-limit", () => {
  test("applies from the next request: a key refused at its limit is admitted once the CLI raises it, and refused again once the CLI lowers it below its count", async () => {
    // The clock stands still: every request below falls in one 60-second window.
    const clock = new FakeClock(Date.now());
    const h = await createHarness({ store: "libsql", clock, limits: { requestsPerMinute: 3 } });
    cleanups.push(() => h.close());
    const env = { CERTKEEPER_DATABASE_URL: `file:${join(h.dir!, "test.db")}` };
    const list = () => h.request("GET", "/v1/certificates");
    const seen = (r: { status: number; headers: Headers; body: any }) => ({
      status: r.status,
      code: r.body?.error?.code ?? null,
      limit: r.headers.get("x-ratelimit-limit"),
      remaining: r.headers.get("x-ratelimit-remaining"),
    });

    for (let i = 0; i < 3; i++) expect((await list()).status).toBe(200);
    expect(seen(await list())).toEqual({ status: 429, code: "rate_limit_exceeded", limit: "3", remaining: "0" });

    // Raised by the CLI, another process on the same database; the server is not restarted.
    const raised = await runCli(["org", "update", "--id", h.org.id, "--rate-limit", "6"], { env });
    expect({ code: raised.code, stderr: messagesOf(raised.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(raised.stdout).toContain("6 requests per minute per key");
    // The window's fifth request (the refused one counted too): under 6.
    expect(seen(await list())).toEqual({ status: 200, code: null, limit: "6", remaining: "1" });

    // Lowered to 5: the window's sixth request is over it.
    const lowered = await runCli(["org", "update", "--id", h.org.id, "--rate-limit", "5"], { env });
    expect({ code: lowered.code, stderr: messagesOf(lowered.stderr) }).toEqual({ code: 0, stderr: "" });
    expect(seen(await list())).toEqual({ status: 429, code: "rate_limit_exceeded", limit: "5", remaining: "0" });
  });
});
