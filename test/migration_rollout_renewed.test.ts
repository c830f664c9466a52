/**
 * A certificate behind two nodes, stored by the release before Part III (schema 7, alert memory of
 * `leaves` and `chain` only), upgraded (CONTRACT §20: "certificate.renewed is raised once"):
 * - caught mid-rollout: node A already serves the new leaf and that release announced
 *   certificate.renewed for it; node B still serves its own older leaf. When B then gets the same new
 *   leaf, nothing is announced again (as on a database made by this version);
 * - with nothing renewed before the upgrade: A's renewal after it is announced, once.
 *
 * The stored row is built as that release wrote it: the row this version writes for the same checks,
 * cut to schema 7's columns, its alert memory and details cut to what that release knew.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { migrate } from "../adapters/sql/migrations.ts";
import { DAY } from "../core/base/mod.ts";
import { executorOver } from "./support/executor_over.ts";
import { createHarness, expectData, testPki } from "./support/harness.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";

/** The schema of the last release before Part III (fcf7372). */
const PREVIOUS_RELEASE_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-upgrade-rollout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const DOMAIN = "rollout.upgrade.test";
const resolve = [{ pattern: DOMAIN, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }];

/** Details fields fcf7372 did not write (Part III's). */
function asPreviousRelease(details: Record<string, unknown>): Record<string, unknown> {
  const { issuerNames: _n, ariCertId: _a, renewalInfo: _r, trust: _t, ...rest } = details;
  return rest;
}

/**
 * Two nodes (A: 20 days left, B: 40) added; A renewed before the upgrade when `renewedBefore`; upgraded;
 * then `after` (B, or A) gets the new leaf. Returns the events raised before and after the upgrade.
 */
async function upgradeThrough(renewedBefore: boolean, after: "A" | "B"): Promise<{ before: string[]; after: string[] }> {
  const { rsaIntermediate: ca } = await testPki();
  const now = Date.now();
  const leaf = (fromDays: number, untilDays: number) =>
    createLeaf({ issuer: ca, dnsNames: [DOMAIN], notBefore: new Date(now + fromDays * DAY), notAfter: new Date(now + untilDays * DAY), freshKey: true });
  const oldA = await leaf(-70, 20);
  const oldB = await leaf(-50, 40);
  const renewed = await leaf(-1, 89);
  const a = await startTlsServer({ cert: chainPem(oldA, ca), key: oldA.keyPem, host: "127.0.0.1" });
  const b = await startTlsServer({ cert: chainPem(oldB, ca), key: oldB.keyPem, host: "127.0.0.2", port: a.port });
  const serve = (server: typeof a, issued: Issued) => server.setCertificate(chainPem(issued, ca), issued.keyPem);
  try {
    // The history before the upgrade: added (A: 20 days left, B: 40), then A renewed (announced).
    const madeUrl = `file:${join(dir, "made.db")}`;
    const made = await createHarness({ store: await openLibsqlStore({ url: madeUrl }), config: { resolve } });
    let certificateId: string;
    let organizationRow: Record<string, unknown>;
    let before: string[];
    try {
      certificateId = expectData(await made.request("POST", "/v1/certificates", { body: { domain: DOMAIN, port: a.port, alertPolicy: "days" } }), 201).id;
      if (renewedBefore) {
        serve(a, renewed);
        expectData(await made.request("POST", `/v1/certificates/${certificateId}/check`), 200);
      }
      before = expectData(await made.request("GET", "/v1/events"), 200).map((e: { type: string }) => e.type);
      organizationRow = (await made.store.organizations.get(made.org.id)) as never;
    } finally {
      await made.close();
    }

    // The same certificate as fcf7372 stored it, in a schema 7 database.
    const client = createClient({ url: madeUrl });
    const row = (await client.execute({ sql: "SELECT * FROM certificates WHERE id = ?", args: [certificateId] })).rows[0]!;
    const org = (await client.execute({ sql: "SELECT * FROM organizations WHERE id = ?", args: [String((organizationRow as { id: string }).id)] })).rows[0]!;
    client.close();
    const url = `file:${join(dir, "v7.db")}`;
    const old = executorOver(createClient({ url }));
    await migrate(old, { until: PREVIOUS_RELEASE_SCHEMA });
    const orgColumns = (await old.execute("PRAGMA table_info(organizations)")).rows.map((r) => String(r.name));
    await old.execute(`INSERT INTO organizations (${orgColumns.join(", ")}) VALUES (${orgColumns.map(() => "?").join(", ")})`, orgColumns.map((c) => org[c] as never));
    const columns = (await old.execute("PRAGMA table_info(certificates)")).rows.map((r) => String(r.name));
    const memory = JSON.parse(String(row.alert_memory));
    const details = JSON.parse(String(row.details));
    const endpoints = JSON.parse(String(row.endpoints)).map((endpoint: { details: unknown }) =>
      typeof endpoint.details === "object" && endpoint.details !== null ? { ...endpoint, details: asPreviousRelease(endpoint.details as never) } : endpoint,
    );
    const values: Record<string, unknown> = {
      ...row,
      alert_memory: JSON.stringify({ leaves: memory.leaves, chain: memory.chain, ...(memory.revoked ? { revoked: memory.revoked } : {}) }),
      details: JSON.stringify(asPreviousRelease(details)),
      endpoints: JSON.stringify(endpoints),
    };
    await old.execute(`INSERT INTO certificates (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`, columns.map((c) => values[c] as never));
    await old.close();

    // Upgraded; then the last node, B, gets the new leaf A has served since before the upgrade.
    const h = await createHarness({ store: await openLibsqlStore({ url }), config: { resolve } });
    try {
      const { key } = await h.makeKey("owner", "live", String(org.id));
      serve(after === "B" ? b : a, renewed);
      expectData(await h.request("POST", `/v1/certificates/${certificateId}/check`, { key }), 200);
      return { before, after: expectData(await h.request("GET", "/v1/events", { key }), 200).map((e: { type: string }) => e.type) };
    } finally {
      await h.close();
    }
  } finally {
    await a.close();
    await b.close();
  }
}

test("a rollout under way at the upgrade: the new leaf, announced before it, is not announced again when the last node gets it", async () => {
  const seen = await upgradeThrough(true, "B");
  expect(seen.before).toEqual(["certificate.renewed", "certificate.expiring"]);
  expect(seen.after).toEqual([]);
});

test("nothing renewed before the upgrade: the first node's renewal after it is announced, once", async () => {
  const seen = await upgradeThrough(false, "A");
  expect(seen.before).toEqual(["certificate.expiring"]);
  expect(seen.after).toEqual(["certificate.renewed"]);
});
