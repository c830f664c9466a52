/**
 * A process killed while it holds leases, end to end as users run it: two `certkeeper serve` processes on one
 * real libSQL server. Process A leases certificates whose TLS servers hang (accept TCP, never answer),
 * and is killed outright (SIGKILL) while it holds those leases (12 minutes by default). Process B must
 * check those certificates about a minute after A's last word, seen through B's API, not when the
 * leases run out.
 */
import { afterAll, expect, test } from "bun:test";
import net from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock, DAY } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe } from "./support/cli.ts";

const dir = mkdtempSync(join(tmpdir(), "certkeeper-dead-process-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});

/** A TCP front for a real TLS server: forwards while `hang` is false, else accepts and never answers. */
async function hangableFront(targetPort: number) {
  const held = new Set<net.Socket>();
  let connections = 0;
  const front = {
    hang: false,
    connections: () => connections,
    port: 0,
  };
  const server = net.createServer((socket) => {
    connections++;
    socket.on("error", () => {});
    if (front.hang) {
      held.add(socket);
      socket.on("close", () => held.delete(socket));
      return;
    }
    const upstream = net.connect(targetPort, "127.0.0.1");
    upstream.on("error", () => socket.destroy());
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  front.port = (server.address() as net.AddressInfo).port;
  cleanups.push(async () => {
    for (const socket of held) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return front;
}

test("a killed process's leased checks are made by the other process about a minute after its last word, not when the leases run out", async () => {
  const sqld = await startSqld();
  cleanups.push(() => sqld.close());
  const setup = await openLibsqlStore({ url: sqld.url });
  const admin = new Admin(setup, systemClock);
  const org = await admin.createOrganization({ name: `Killed ${crypto.randomUUID()}`, plan: "pro", limits: {} });
  const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
  const key = (await admin.createApiKey({ userId: user.id, name: "operator", mode: "live" })).key;
  await setup.close();

  const { root, rsaIntermediate } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  const env = {
    CERTKEEPER_DATABASE_URL: sqld.url,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_CHECK_INTERVAL: "1s",
    // The defaults' lease: 10 s × (4 × 16 + 8 + 1) = about 12 minutes.
    CERTKEEPER_TLS_TIMEOUT: "10s",
    CERTKEEPER_CHECK_CONCURRENCY: "16",
  };

  const fronts = [];
  for (let i = 0; i < 3; i++) {
    const domain = `dead${i}.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 90 * DAY) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    cleanups.push(() => server.close());
    fronts.push({ domain, front: await hangableFront(server.port) });
  }

  const a = await startServe({ env });
  cleanups.push(() => a.stop("SIGKILL"));
  const ids: string[] = [];
  for (const { domain, front } of fronts) {
    const added = await callServe(a, key, "POST", "/v1/certificates", { domain, port: front.port });
    expect(added.status).toBe(201);
    ids.push(added.body.id ?? added.body.data?.id);
  }
  // From now on every handshake hangs: A's next checks (due each second) wait out their 10 s.
  for (const { front } of fronts) front.hang = true;
  const db = createClient({ url: sqld.url });
  cleanups.push(async () => db.close());
  const leased = async () =>
    (await db.execute("SELECT id, lease_owner, next_check_at FROM certificates")).rows.filter(
      (row) => row.lease_owner !== null && Number(row.next_check_at) > Date.now() + 5 * 60_000,
    );
  // A holds a long lease on every certificate (mid-check on a hanging server).
  const deadline = Date.now() + 15_000;
  while ((await leased()).length < ids.length && Date.now() < deadline) await Bun.sleep(100);
  const held = await leased();
  expect(held.length).toBe(ids.length);
  const owners = new Set(held.map((row) => String(row.lease_owner)));
  expect(owners.size).toBe(1);

  const b = await startServe({ env });
  cleanups.push(() => b.stop());
  await a.stop("SIGKILL");
  const killedAt = Date.now();
  // Still A's, all three, leased for about 12 minutes more (nothing of them due before then without liveness).
  const stillHeld = await leased();
  expect(stillHeld.map((row) => String(row.lease_owner))).toEqual(ids.map(() => [...owners][0]!));
  // The servers answer again: B's check, once made, ends at once.
  for (const { front } of fronts) front.hang = false;

  const checkedSince = async (id: string) => {
    const { status, body } = await callServe(b, key, "GET", `/v1/certificates/${id}`);
    expect(status).toBe(200);
    const last = body.lastCheckedAt ?? body.data?.lastCheckedAt;
    return last !== null && last !== undefined && Date.parse(last) > killedAt;
  };
  // A minute of B's beats without a word from A (60-75 s), a poll and a check: 100 s leaves room for a loaded machine.
  const until = killedAt + 100_000;
  let checked: boolean[] = [];
  while (Date.now() < until) {
    checked = await Promise.all(ids.map(checkedSince));
    if (checked.every(Boolean)) break;
    await Bun.sleep(1_000);
  }
  expect({ checked, seconds: Math.round((Date.now() - killedAt) / 1000) }).toMatchObject({ checked: ids.map(() => true) });
  // About a minute after A's last word (four of B's beats, 15 s apart, without a new word from A; then a check), long before 12 minutes.
  expect(Date.now() - killedAt).toBeLessThan(100_000);
  // And B said so.
  const said = b.output();
  expect(said.stdout + said.stderr).toContain("checks leased by a process that stopped answering are due again");
}, 150_000);
