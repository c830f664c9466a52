/**
 * `import` prints "every failed line with its line number and the API's error" (docs/cli.md),
 * and "what an organization's users typed ... and what servers answered reach the terminal as text,
 * never as commands to it: in tables and readable log lines, control characters (escape sequences, C1
 * controls, line breaks within a cell, text-direction marks) are written out as `\x1b` or `\u202e`"
 * (docs/cli.md, last bullet). A CSV quoted cell may hold a line break (RFC 4180, and the parser joins
 * physical lines for it): the domain of such a row must stay inside its own result line.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, runCliJson, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();

test("a failed CSV row whose quoted domain holds a line break is reported on one line, the break written out", async () => {
  const ws = workspace();
  await runCliJson(["org", "create", "--name", "Acme"], { env: ws.env });
  const file = join(ws.dir, "fleet.csv");
  // A spreadsheet export from a customer: the second "line" would read like a created import result.
  writeFileSync(file, 'domain,name\r\n"bad_domain!\r\nfleet.csv:9  shop.example.com  created",Shop\r\n');
  const result = await runCli(["import", "--org", "Acme", file], { env: { ...ws.env, CERTKEEPER_LOG_LEVEL: "error" } });
  expect(result.code).toBe(1);
  const lines = result.stdout.trimEnd().split("\n");
  // One failed line (line 2 of the file, with the error) and the summary: nothing else.
  expect(lines).toHaveLength(2);
  expect(lines[0]).toStartWith(`${file}:2  `);
  expect(lines[0]).toContain("invalid_domain");
  expect(lines[1]).toMatch(/^Import imp_\S+: 1 line, 0 created, 1 failed\.$/);
  expect(result.stdout).not.toMatch(/^fleet\.csv:9 {2}shop\.example\.com {2}created/m);
});
