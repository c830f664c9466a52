/**
 * A libSQL server that refuses connections (stopped, not started yet, a wrong port): the CLI's daily
 * commands and `serve` wait briefly for it (a server started beside them), then fail in one line naming
 * the database and its variable, instead of waiting as long as for another process's upgrade (ten
 * minutes); and `serve` still stops at the first SIGTERM while it waits.
 */
import { expect, setDefaultTimeout, test } from "bun:test";
import { CLI_MAIN, freePort, messagesOf, runCli } from "./support/cli.ts";

setDefaultTimeout(60_000);

test("org list, certificate list and serve against a server refusing connections fail within seconds, in one line naming it", async () => {
  const port = await freePort();
  const env = { CERTKEEPER_DATABASE_URL: `http://user:secret@127.0.0.1:${port}`, CERTKEEPER_LOG_LEVEL: "error", CERTKEEPER_PORT: String(await freePort()) };
  const started = Date.now();
  const results = await Promise.all(
    [["org", "list", "--json"], ["certificate", "list", "--org", "Acme", "--json"], ["serve"]].map((args) => runCli(args, { env, timeoutMs: 50_000 })),
  );
  // Ten seconds of waiting each, not the ten minutes another process's upgrade is given.
  expect(Date.now() - started).toBeLessThan(40_000);
  const said = `no connection could be made to the database server at http://user:********@127.0.0.1:${port} (CERTKEEPER_DATABASE_URL): start it, or correct the URL`;
  for (const result of results) {
    expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
    expect(messagesOf(result.stderr).trim().split("\n")).toHaveLength(1);
    expect(messagesOf(result.stderr)).toContain(said);
    expect(result.stderr).not.toContain("secret");
  }
  expect(messagesOf(results[2]!.stderr)).toStartWith("Error: certkeeper could not start: ");
});

test("serve waiting for a database server that refuses connections stops at the first SIGTERM", async () => {
  const child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CERTKEEPER_DATABASE_URL: `http://127.0.0.1:${await freePort()}`, CERTKEEPER_PORT: String(await freePort()), CERTKEEPER_LOG_LEVEL: "error" },
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    await Bun.sleep(1500);
    child.kill("SIGTERM");
    const exited = await Promise.race([child.exited, Bun.sleep(5_000).then(() => "still running")]);
    expect(exited).toBe(0);
  } finally {
    child.kill("SIGKILL");
    await child.exited;
  }
});
