/**
 * docs/configuration.md: "A value that cannot be read stops the start (or the CLI command) with one
 * line naming the variable." CERTKEEPER_MAIL_FROM is read as any string: `certkeeper at example`
 * (no address at all) starts the server and every command, and each email is then written without a
 * From header (seen in ./data/outbox/ through `channel test`, which says the notification reached the
 * channel): the typo shows up, if ever, as mail a relay refuses or files as spam, not at start.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { configFromEnv } from "../core/config/mod.ts";
import { runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("CERTKEEPER_MAIL_FROM that is not an address", () => {
  for (const value of ["certkeeper at example", "certkeeper@", "<>"]) {
    test(`"${value}" is refused naming the variable`, () => {
      expect(() => configFromEnv({ CERTKEEPER_MAIL_FROM: value })).toThrow(/CERTKEEPER_MAIL_FROM/);
    });
  }

  test("a CLI command stops with one line naming CERTKEEPER_MAIL_FROM, exit 2", async () => {
    const ws = workspace();
    const result = await runCli(["org", "list"], { env: { ...ws.env, CERTKEEPER_MAIL_FROM: "certkeeper at example" }, cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("CERTKEEPER_MAIL_FROM");
  });

  test("an address, with or without a display name, is accepted", () => {
    expect(configFromEnv({ CERTKEEPER_MAIL_FROM: "alerts@example.com" }).mailFrom).toBe("alerts@example.com");
    expect(configFromEnv({ CERTKEEPER_MAIL_FROM: "certkeeper <alerts@example.com>" }).mailFrom).toBe("certkeeper <alerts@example.com>");
  });
});
