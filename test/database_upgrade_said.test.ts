/**
 * What an operator sees when this release opens a database of an older one. The upgrade cannot be
 * undone (an older release refuses the database from then on, so a rollback needs a backup taken
 * before), so it is said: `serve` logs "upgrading the database" as it begins and "database upgraded"
 * once done, naming both schemas; and so does any CLI command that opens the database (a read-only
 * listing included), on stderr. Both were silent.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { migrate, SCHEMA_VERSION } from "../adapters/sql/migrations.ts";
import { executorOver } from "./support/executor_over.ts";
import { runCli, startServe } from "./support/cli.ts";

/** The schema of the release before Part III (before alert policies). */
const PART_II_SCHEMA = 7;

const dir = mkdtempSync(join(tmpdir(), "certkeeper-upgrade-said-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A database as the release before Part III left it: its schema, one organization. */
async function partTwoDatabase(name: string): Promise<string> {
  const path = join(dir, name);
  const db = executorOver(createClient({ url: `file:${path}` }));
  await migrate(db, { until: PART_II_SCHEMA });
  await db.execute(
    `INSERT INTO organizations (id, name, plan, certificate_limit, channel_limit, rate_limit, created_at, watch_limit)
     VALUES ('org_partii', 'Acme', 'free', 25, 5, 60, ?, 1)`,
    [Date.now()],
  );
  await db.close();
  return path;
}

async function schemaOf(path: string): Promise<number> {
  const db = createClient({ url: `file:${path}` });
  try {
    const { rows } = await db.execute("SELECT MAX(version) AS version FROM schema_migrations");
    return Number(rows[0]!.version);
  } finally {
    db.close();
  }
}

test("serve on a database of an older release logs that it upgraded it, naming both schemas", async () => {
  const path = await partTwoDatabase("serve.db");
  const server = await startServe({ env: { CERTKEEPER_DATABASE_URL: `file:${path}`, CERTKEEPER_LOG_LEVEL: "info", CERTKEEPER_LOG_FORMAT: "json" } });
  let output = "";
  try {
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  } finally {
    await server.stop();
    const { stdout, stderr } = server.output();
    output = stdout + stderr;
  }
  expect(await schemaOf(path)).toBe(SCHEMA_VERSION);
  // Expected: one line saying the database was upgraded, from schema 7 to this release's.
  const upgradeLines = output
    .split("\n")
    .filter((line) => /migrat|upgrad|schema/i.test(line))
    .filter((line) => line.includes(String(PART_II_SCHEMA)) && line.includes(String(SCHEMA_VERSION)));
  expect(upgradeLines.length).toBeGreaterThan(0);
  const said = output.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line));
  expect(said.filter((line) => /upgrad/.test(line.msg)).map((line) => [line.msg, line.fromSchema, line.toSchema])).toEqual([
    ["upgrading the database", PART_II_SCHEMA, SCHEMA_VERSION],
    ["database upgraded", PART_II_SCHEMA, SCHEMA_VERSION],
  ]);
}, 30_000);

test("a read-only CLI command (org list) of this release does not upgrade an older release's database without a word", async () => {
  const path = await partTwoDatabase("cli.db");
  const result = await runCli(["org", "list"], { env: { CERTKEEPER_DATABASE_URL: `file:${path}` } });
  const said = `${result.stdout}\n${result.stderr}`;
  const schema = await schemaOf(path);
  // Expected: the database left as it was (the command saying the server upgrades it), or, if the
  // command upgrades it, saying so, from which schema to which.
  const saysSo = /migrat|upgrad|schema/i.test(said) && said.includes(String(PART_II_SCHEMA)) && said.includes(String(SCHEMA_VERSION));
  expect({ schema, saysSo }).not.toEqual({ schema: SCHEMA_VERSION, saysSo: false });
}, 30_000);
