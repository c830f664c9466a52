/**
 * A changed CERTKEEPER_CHECK_INTERVAL applies at the next start (CONTRACT §1): every certificate is
 * next checked no later than its last check plus the new interval, even one whose next check was
 * scheduled under a longer interval. Real server processes on one database file, a real TLS server.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { DAY, systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startServe, workspacesRemovedAfterAll, type ServeProcess } from "./support/cli.ts";

// Two server processes one after the other and seconds of real scheduling.
setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

describe("a changed check interval", () => {
  test("a restart with a shorter interval re-checks a certificate checked under a longer one within the new interval", async () => {
    const ws = workspace();
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const domain = `interval.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 90 * DAY) });
    const tlsServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    cleanups.push(() => tlsServer.close());
    const env = {
      ...ws.env,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_TLS_TIMEOUT: "2s",
    };

    const store = await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! });
    const admin = new Admin(store, systemClock);
    const org = await admin.createOrganization({ name: "Interval", plan: "pro" });
    const user = await admin.createUser({ organizationId: org.id, email: "owner@interval.test", role: "owner" });
    const { key } = await admin.createApiKey({ userId: user.id, name: "interval", mode: "live" });
    await store.close();

    const call = async (server: ServeProcess, method: string, path: string, body?: unknown) => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: (await response.json()) as any };
    };

    // Added (and so checked) under the default six hours: its next check is six hours away.
    const before = await startServe({ env: { ...env, CERTKEEPER_CHECK_INTERVAL: "6h" } });
    cleanups.push(() => before.stop("SIGKILL"));
    const added = await call(before, "POST", "/v1/certificates", { domain, port: tlsServer.port });
    expect(added.status).toBe(201);
    const id: string = added.body.data.id;
    const firstCheck = Date.parse((await call(before, "GET", `/v1/certificates/${id}`)).body.data.lastCheckedAt);
    expect(firstCheck).toBeGreaterThan(Date.now() - 10_000);
    expect(await before.stop("SIGTERM")).toBe(0);
    const connectionsBefore = tlsServer.connections();

    // Restarted with two seconds: due two seconds after that check, not six hours after it.
    const after = await startServe({ env: { ...env, CERTKEEPER_CHECK_INTERVAL: "2s", CERTKEEPER_LOG_LEVEL: "info" } });
    cleanups.push(() => after.stop("SIGKILL"));
    const restartedAt = Date.now();
    const due = Math.max(firstCheck + 2_000, restartedAt);
    let lastCheckedAt = firstCheck;
    while (lastCheckedAt === firstCheck && Date.now() < due + 10_000) {
      await Bun.sleep(100);
      lastCheckedAt = Date.parse((await call(after, "GET", `/v1/certificates/${id}`)).body.data.lastCheckedAt);
    }
    expect(lastCheckedAt).toBeGreaterThan(firstCheck);
    expect(tlsServer.connections()).toBeGreaterThan(connectionsBefore);
    // Within the new interval of when it was due (plus the scheduler's one-second look at the store and
    // slack for a loaded machine), where the old schedule would have waited six hours.
    expect(lastCheckedAt - due).toBeLessThan(2_000 + 3_000);

    // And from then on within two seconds of the last check: the next on the certificate's own phase
    // of the interval (sooner), then every two seconds.
    const nextCheck = async (last: number) => {
      let at = last;
      while (at === last && Date.now() < last + 10_000) {
        await Bun.sleep(100);
        at = Date.parse((await call(after, "GET", `/v1/certificates/${id}`)).body.data.lastCheckedAt);
      }
      return at;
    };
    const second = lastCheckedAt;
    const third = await nextCheck(second);
    expect(third - second).toBeGreaterThan(0);
    expect(third - second).toBeLessThan(2_000 + 3_000);
    const fourth = await nextCheck(third);
    expect(fourth - third).toBeGreaterThan(0);
    expect(fourth - third).toBeLessThan(2_000 + 3_000);
    // On its phase, about every two seconds and not more often (a check that ran late makes the next
    // gap shorter by as much, so the gaps alone say little on a loaded machine): over 8 s, 3 to 5 checks.
    const connections = tlsServer.connections();
    await Bun.sleep(8_000);
    const checks = tlsServer.connections() - connections;
    expect(checks).toBeGreaterThanOrEqual(3);
    expect(checks).toBeLessThanOrEqual(5);

    expect(await after.stop("SIGTERM")).toBe(0);
    const logLines = after
      .output()
      .stdout.split("\n")
      .filter((line) => line.includes("next checks brought forward"))
      .map((line) => JSON.parse(line));
    expect(logLines).toEqual([
      { time: expect.any(String), level: "info", msg: "next checks brought forward to the check interval", certificates: 1, intervalMs: 2_000 },
    ]);
  });
});
