/**
 * "Errors go to stderr, naming the flag or variable to change, with a non-zero exit"
 * (docs/cli.md). A libSQL server that refuses connections is named with CERTKEEPER_DATABASE_URL
 * (cli_database_server_down.test.ts); a local `file:` URL naming a file that is no database (a typo
 * pointing at another file) or a folder is named the same way, with what to do, never in the driver's
 * words alone ("file is not a database", `ConnectionFailed("… 14")`).
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { messagesOf, runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();

test("CERTKEEPER_DATABASE_URL naming a text file: org list fails naming the variable", async () => {
  const ws = workspace();
  const file = join(ws.dir, "notes.txt");
  writeFileSync(file, "these are not the tables you are looking for\n".repeat(200));
  const result = await runCli(["org", "list", "--json"], { env: { CERTKEEPER_DATABASE_URL: `file:${file}` } });
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
  expect(messagesOf(result.stderr)).toContain("CERTKEEPER_DATABASE_URL");
});

test("CERTKEEPER_DATABASE_URL naming a folder: org list fails naming the variable", async () => {
  const ws = workspace();
  const dir = join(ws.dir, "data");
  mkdirSync(dir);
  const result = await runCli(["org", "list", "--json"], { env: { CERTKEEPER_DATABASE_URL: `file:${dir}` } });
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
  expect(messagesOf(result.stderr)).toContain("CERTKEEPER_DATABASE_URL");
  expect(messagesOf(result.stderr)).not.toContain("ConnectionFailed(");
});
