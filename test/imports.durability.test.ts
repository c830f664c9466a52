/**
 * Imports that outlive their process (CONTRACT §16): a real `certkeeper serve` killed outright
 * (SIGKILL) mid-import, and two processes on one real libSQL server (sqld), one of them killed. The
 * import finishes once, every item settled, each certificate created exactly once, and only one
 * process works an import at a time.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { DAY, systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createClient } from "@libsql/client";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startDelayingFront, startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { startServe, type ServeProcess } from "./support/cli.ts";
import { temporaryDirectory } from "./support/temp.ts";

// Server processes, a libSQL server, leases running out: minutes on a loaded machine, not Bun's 5 s.
setDefaultTimeout(120_000);

const dir = temporaryDirectory("certkeeper-imports-");
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
});

const ITEMS = 120;
const DELAY_MS = 60;

/** A TLS server for every name under import.certkeeper.test, behind a front that slows each retrieval. */
async function slowTarget() {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.import.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 90 * DAY) });
  const tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const front = await startDelayingFront(tls.port, DELAY_MS);
  cleanups.push(() => tls.close(), () => front.close());
  return front;
}

async function environment(databaseUrl: string): Promise<Record<string, string>> {
  const { root } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  return {
    CERTKEEPER_DATABASE_URL: databaseUrl,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    // A 3 s TLS timeout (slack for a loaded machine) gives an import lease of 9 s: a dead process's
    // import is taken over within seconds.
    CERTKEEPER_TLS_TIMEOUT: "3s",
    CERTKEEPER_CHECK_CONCURRENCY: "2",
  };
}

async function ownerKey(databaseUrl: string): Promise<string> {
  const store = await openLibsqlStore({ url: databaseUrl });
  try {
    const admin = new Admin(store, systemClock);
    const org = await admin.createOrganization({ name: `Imports ${crypto.randomUUID()}`, plan: "pro" });
    const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
    return (await admin.createApiKey({ userId: user.id, name: "import", mode: "live" })).key;
  } finally {
    await store.close();
  }
}

async function call(server: ServeProcess, key: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const answer = { status: response.status, body: (await response.json()) as any };
  // Every call here expects data: an error says so with the server's own words and last log lines,
  // not as a property of undefined somewhere later.
  if (!answer.body?.data) {
    const log = server.output().stdout.trim().split("\n").slice(-5).join("\n");
    throw new Error(`${method} ${path} answered ${answer.status} ${JSON.stringify(answer.body).slice(0, 400)}\nthe server's last log lines:\n${log}`);
  }
  return answer;
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 300)}`);
    await Bun.sleep(100);
  }
}

function importBody(port: number) {
  return { certificates: Array.from({ length: ITEMS }, (_, i) => ({ domain: `site-${i}.import.${TEST_DOMAIN}`, port, tags: ["imported"] })) };
}

/** The finished import and the organization's certificates: every item created once, nothing twice. */
async function expectFinishedOnce(server: ServeProcess, key: string, id: string) {
  const done = await waitFor("the import to finish", () => call(server, key, "GET", `/v1/imports/${id}`), (r) => r.body.data.status === "finished");
  expect(done.body.data.results.filter((r: any) => r.status !== "created")).toEqual([]);
  expect(done.body.data).toMatchObject({ status: "finished", total: ITEMS, processed: ITEMS, created: ITEMS, failed: 0 });
  expect(done.body.data.results.map((r: any) => r.index)).toEqual(Array.from({ length: ITEMS }, (_, i) => i));
  expect(done.body.data.results.filter((r: any) => r.status !== "created")).toEqual([]);
  const certificates: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await call(server, key, "GET", `/v1/certificates?tag=imported&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
    certificates.push(...page.body.data);
    cursor = page.body.meta.nextCursor;
  } while (cursor);
  expect(certificates.length).toBe(ITEMS);
  expect(new Set(certificates.map((c) => c.domain)).size).toBe(ITEMS);
  expect(new Set(done.body.data.results.map((r: any) => r.certificateId))).toEqual(new Set(certificates.map((c) => c.id)));
}

describe("an import survives its process", () => {
  test("kill -9 mid-import: the restarted process finishes it, each certificate created exactly once", async () => {
    const databaseUrl = `file:${join(dir, "kill.db")}`;
    const env = await environment(databaseUrl);
    const key = await ownerKey(databaseUrl);
    const front = await slowTarget();

    const first = await startServe({ env });
    cleanups.push(() => first.stop("SIGKILL"));
    const posted = await call(first, key, "POST", "/v1/imports", importBody(front.port));
    expect(posted.status).toBe(202);
    const id = posted.body.data.id;
    const midway = await waitFor("some progress", () => call(first, key, "GET", `/v1/imports/${id}`), (r) => r.body.data.processed >= 10);
    expect(midway.body.data.status).toBe("running");
    expect(await first.stop("SIGKILL")).not.toBe(0);

    const second = await startServe({ env });
    cleanups.push(() => second.stop("SIGKILL"));
    const resumed = await call(second, key, "GET", `/v1/imports/${id}`);
    expect(resumed.body.data.processed).toBeLessThan(ITEMS);
    await expectFinishedOnce(second, key, id);
    expect(front.mostAtOnce()).toBeLessThanOrEqual(2);
    expect(await second.stop()).toBe(0);
  });

  test("SIGTERM mid-import: the process exits 0 and hands the lease back; the next one finishes it", async () => {
    const databaseUrl = `file:${join(dir, "term.db")}`;
    const env = await environment(databaseUrl);
    const key = await ownerKey(databaseUrl);
    const front = await slowTarget();
    const first = await startServe({ env });
    cleanups.push(() => first.stop("SIGKILL"));
    const id = (await call(first, key, "POST", "/v1/imports", importBody(front.port))).body.data.id;
    await waitFor("some progress", () => call(first, key, "GET", `/v1/imports/${id}`), (r) => r.body.data.processed >= 10);
    expect(await first.stop("SIGTERM", 15_000)).toBe(0);

    // The lease was handed back: nobody holds the import, so the next process resumes at once.
    const client = createClient({ url: databaseUrl });
    const { rows } = await client.execute({ sql: "SELECT status, lease_until FROM imports WHERE id = ?", args: [id] });
    client.close();
    expect(rows[0]!.status).toBe("running");
    expect(Number(rows[0]!.lease_until)).toBeLessThanOrEqual(Date.now());

    const second = await startServe({ env });
    cleanups.push(() => second.stop("SIGKILL"));
    expect((await call(second, key, "GET", `/v1/imports/${id}`)).body.data.processed).toBeLessThan(ITEMS);
    await expectFinishedOnce(second, key, id);
    expect(await second.stop()).toBe(0);
  });

  test("two processes on one sqld: one works the import at a time; when it is killed, the other takes over and finishes", async () => {
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());
    const env = await environment(sqld.url);
    const key = await ownerKey(sqld.url);
    const front = await slowTarget();

    // A alone first, so A holds the import's lease; then B joins.
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const id = (await call(a, key, "POST", "/v1/imports", importBody(front.port))).body.data.id;
    await waitFor("A's progress", () => call(a, key, "GET", `/v1/imports/${id}`), (r) => r.body.data.processed >= 5);
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));
    const before = (await call(b, key, "GET", `/v1/imports/${id}`)).body.data.processed;
    await waitFor("more progress, seen from B", () => call(b, key, "GET", `/v1/imports/${id}`), (r) => r.body.data.processed >= before + 10);
    // Each process has CHECK_CONCURRENCY 2: more than 2 retrievals at once would mean both worked it.
    expect(front.mostAtOnce()).toBeLessThanOrEqual(2);

    expect(await a.stop("SIGKILL")).not.toBe(0);
    const orphaned = (await call(b, key, "GET", `/v1/imports/${id}`)).body.data;
    expect(orphaned.status).toBe("running");
    await expectFinishedOnce(b, key, id);
    expect(front.mostAtOnce()).toBeLessThanOrEqual(2);
    expect(await b.stop()).toBe(0);
  });
});
