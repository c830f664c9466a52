/**
 * The CLI's argument handling (docs/cli.md): extra positional arguments are a wrong call (exit 2)
 * naming the stray one; `help COMMAND extra` explains nothing (exit 2); `--version` prints the
 * version wherever it stands; `serve --database` overrides CERTKEEPER_DATABASE_URL; what users typed
 * reaches the terminal as text in every human rendering, not only in tables; a comment row of a CSV
 * import file is skipped as in a plain list.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import packageJson from "../package.json" with { type: "json" };
import { parseImportFile } from "../adapters/cli/import_file.ts";
import { expectUsageError, freePort, runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("arguments", () => {
  test("import with two files is a usage error (exit 2) naming the second", async () => {
    const ws = workspace();
    const result = await runCli(["import", "--org", "Acme", "one.txt", "two.txt"], { env: ws.env, cwd: ws.dir });
    expectUsageError(result, /takes no argument "two\.txt"/);
  });

  test("help of a command with a stray word is a wrong call (exit 2)", async () => {
    const result = await runCli(["help", "org", "create", "extra"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain('No command "org create extra"');
  });

  test("--version after a command's words prints the version and runs nothing (exit 0)", async () => {
    const ws = workspace();
    const result = await runCli(["org", "list", "--version"], { env: ws.env, cwd: ws.dir });
    expect(result).toMatchObject({ code: 0, stdout: `certkeeper ${packageJson.version}\n` });
  });

  test("serve --database overrides CERTKEEPER_DATABASE_URL: a folder given there stops the start naming it (exit 1)", async () => {
    const ws = workspace();
    const folder = join(ws.dir, "a-folder");
    mkdirSync(folder);
    const result = await runCli(["serve", "--database", `file:${folder}`, "--port", String(await freePort())], {
      env: { ...ws.env, CERTKEEPER_HOST: "127.0.0.1" },
      cwd: ws.dir,
      timeoutMs: 15_000,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(folder);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("backup", () => {
  test("backup --to a file in a folder that does not exist fails (exit 1) saying to create the folder", async () => {
    const ws = workspace();
    await runCli(["org", "list"], { env: ws.env, cwd: ws.dir });
    const result = await runCli(["backup", "--to", join(ws.dir, "missing", "copy.db")], { env: ws.env, cwd: ws.dir });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("whose folder does not exist: create it first");
  });
});

describe("what users typed is shown, never acted on", () => {
  test("org create's sentence writes an escape sequence in the name out as text", async () => {
    const ws = workspace();
    const result = await runCli(["org", "create", "--name", "Evil\x1b[31mRed"], { env: ws.env, cwd: ws.dir });
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("\x1b");
    expect(result.stdout).toContain("Evil\\x1b[31mRed");
  });
});

describe("the import file", () => {
  test("CSV: a row starting with # is a comment, skipped as in a plain list", () => {
    expect(parseImportFile("domain,port\n# staging below\na.example,443\n  # b.example,8443\n")).toEqual([{ line: 3, body: { domain: "a.example", port: 443 } }]);
  });
});
