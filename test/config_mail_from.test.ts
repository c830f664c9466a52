/**
 * CERTKEEPER_MAIL_FROM must be an address (`alerts@example.com`, or `certkeeper <alerts@example.com>`):
 * anything else stops the server and every CLI command with one line naming the variable, instead of
 * emails written without a From header and found out only when a relay refuses them.
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
