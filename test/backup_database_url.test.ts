/**
 * `backup --to FILE` (CONTRACT §17) copies the local database that CERTKEEPER_DATABASE_URL names, the
 * same file `serve` and every other command open. A `file:` URL is a URL: a path with a space written
 * percent-encoded (`my%20dir`), or with the `localhost` authority, is opened by the server and the CLI,
 * and must be backed up too.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, runCliJson } from "./support/cli.ts";

setDefaultTimeout(60_000);
const dir = mkdtempSync(join(tmpdir(), "certkeeper-backup-url-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

for (const [label, urlOf] of [
  ["percent-encoded path", (folder: string) => `file:${folder.replaceAll(" ", "%20")}/db.sqlite`],
  ["file://localhost/ authority", (folder: string) => `file://localhost${folder}/db.sqlite`],
] as const) {
  test(`backup copies the database the other commands open (${label})`, async () => {
    const folder = join(dir, `${label.replace(/\W+/g, "-")} with space`);
    mkdirSync(folder);
    const env = { CERTKEEPER_DATABASE_URL: urlOf(folder) };
    // Every other command opens this database: it is made, and holds the organization.
    const org = await runCliJson(["org", "create", "--name", "Acme"], { env });
    expect(existsSync(join(folder, "db.sqlite"))).toBe(true);
    expect((await runCliJson(["org", "list"], { env })).map((o: any) => o.id)).toContain(org.id);

    const to = join(dir, `${label.replace(/\W+/g, "-")}.backup.db`);
    const backup = await runCli(["backup", "--to", to], { env });
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: "" });
    // The copy opens as it was.
    const copied = await runCliJson(["org", "list"], { env: { CERTKEEPER_DATABASE_URL: `file:${to}` } });
    expect(copied.map((o: any) => o.id)).toEqual([org.id]);
  });
}

test("backup's hint names the copy as a file: URL that opens it, whatever its path holds (% ? #)", async () => {
  const folder = join(dir, "odd % name ? # here");
  mkdirSync(folder);
  const env = { CERTKEEPER_DATABASE_URL: `file:${join(dir, "plain")}/db.sqlite` };
  mkdirSync(join(dir, "plain"));
  const org = await runCliJson(["org", "create", "--name", "Odd"], { env });
  const to = join(folder, "copy.db");
  const backup = await runCli(["backup", "--to", to], { env });
  expect(backup.code).toBe(0);
  const url = /CERTKEEPER_DATABASE_URL=(\S+) npm start/.exec(backup.stdout)![1]!;
  expect((await runCliJson(["org", "list"], { env: { CERTKEEPER_DATABASE_URL: url } })).map((o: any) => o.id)).toEqual([org.id]);
});

test("backup of file::memory: says the database is no local file", async () => {
  const backup = await runCli(["backup", "--to", join(dir, "never.db")], { env: { CERTKEEPER_DATABASE_URL: "file::memory:" } });
  expect(backup.code).not.toBe(0);
  expect(backup.stderr).toContain("not one");
});
