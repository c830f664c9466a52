/**
 * The CLI commands that change what is kept log each change on stderr, as the server logs it
 * (docs/cli.md, docs/console.md: "its stderr is the audit trail to keep"): `certificate add`, and also
 * `import` (each certificate it adds, with the import's id) and `certificate remove` (what it removed),
 * which logged nothing.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { logLinesOf, runCli, runCliJson, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();

describe("the CLI commands that change what is kept log each change on stderr", () => {
  const base = `audit.${TEST_DOMAIN}`;
  let server: TlsTestServer;
  let ws: Workspace;
  let env: Record<string, string>;
  let org: any;

  beforeAll(async () => {
    const { root, rsaIntermediate } = await testPki();
    ws = workspace();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${base}`], notAfter: new Date(Date.now() + 60 * DAY) });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    env = {
      ...ws.env,
      CERTKEEPER_RESOLVE: `*.${base}=127.0.0.1`,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_LOG_FORMAT: "json",
      CERTKEEPER_ALERT_POLICY: "days",
    };
    org = await runCliJson(["org", "create", "--name", "Audited"], { env });
  });
  afterAll(() => server?.close());

  test("certificate add logs `certificate added` (the baseline the docs describe)", async () => {
    const result = await runCli(["certificate", "add", "--org", org.id, `one.${base}:${server.port}`, "--json"], { env });
    expect(result.code).toBe(0);
    const added = JSON.parse(result.stdout);
    expect(logLinesOf(result.stderr).map((l) => [l.msg, l.certificateId])).toContainEqual(["certificate added", added.id]);
  });

  test("import logs each certificate it adds, as the docs' list of logging commands names imports", async () => {
    const file = join(ws.dir, "fleet.txt");
    writeFileSync(file, `two.${base}:${server.port}\nthree.${base}:${server.port}\n`);
    const result = await runCli(["import", "--org", org.id, file, "--json"], { env });
    expect(result.code).toBe(0);
    const finished = JSON.parse(result.stdout);
    expect(finished).toMatchObject({ status: "finished", created: 2, failed: 0 });
    const ids = finished.results.map((r: any) => r.certificateId);
    // What it changed (two certificates now monitored) is on stderr, as the server's log would say it.
    const added = logLinesOf(result.stderr).filter((line) => line.msg === "certificate added");
    expect(added.map((line) => line.certificateId).sort()).toEqual([...ids].sort());
    for (const line of added) expect(line).toMatchObject({ importId: finished.id, status: "valid", mode: "live" });
  });

  test("certificate remove logs the removal on stderr", async () => {
    const added = await runCliJson(["certificate", "add", "--org", org.id, `four.${base}:${server.port}`], { env });
    const result = await runCli(["certificate", "remove", "--id", added.id, "--json"], { env });
    expect(result.code).toBe(0);
    const removed = logLinesOf(result.stderr).filter((line) => line.msg === "certificate removed");
    expect(removed).toEqual([expect.objectContaining({ certificateId: added.id, domain: `four.${base}`, port: server.port, mode: "live" })]);
  });
});
