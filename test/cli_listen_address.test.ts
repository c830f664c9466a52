/**
 * Where the server listens, read at the start and named when wrong: `serve --port abc` (or 70000) and
 * `serve --host "a b"` are usage errors naming the flag (exit 2), as CERTKEEPER_PORT=abc names its
 * variable; CERTKEEPER_HOST with a port in it is refused naming the variable, and a host name that
 * does not resolve stops the start with one line naming CERTKEEPER_HOST (not getaddrinfo's or
 * listen's own words alone).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { expectUsageError, runCli, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("a listen address (--port, CERTKEEPER_HOST) that cannot be used", () => {
  test("CERTKEEPER_PORT=abc is refused naming the variable (as documented)", async () => {
    const ws = workspace();
    const result = await runCli(["serve"], { env: { ...ws.env, CERTKEEPER_PORT: "abc" }, cwd: ws.dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("CERTKEEPER_PORT");
  });

  for (const port of ["abc", "70000"]) {
    test(`serve --port ${port} is a usage error naming --port, exit 2`, async () => {
      const ws = workspace();
      const result = await runCli(["serve", "--port", port], { env: ws.env, cwd: ws.dir, timeoutMs: 15_000 });
      expectUsageError(result, /--port/);
      expect(result.stderr).not.toContain("options.port");
    });
  }

  for (const host of ["127.0.0.1:3000", "bogus.invalid"]) {
    test(`CERTKEEPER_HOST=${host} stops the start with a line naming CERTKEEPER_HOST`, async () => {
      const ws = workspace();
      const result = await runCli(["serve"], { env: { ...ws.env, CERTKEEPER_HOST: host, CERTKEEPER_PORT: "0" }, cwd: ws.dir, timeoutMs: 15_000 });
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
      expect(result.stderr).toContain("CERTKEEPER_HOST");
    });
  }
});
