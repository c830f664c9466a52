/**
 * `certkeeper check` (docs/cli.md, CONTRACT §17) where the other check tests leave it open: the worst
 * status decides the exit code whatever the order of the targets; a target's port must be 1-65535 and
 * --alert-policy renewal or days (exit 3 otherwise, naming it); without --alert-policy,
 * CERTKEEPER_ALERT_POLICY decides; without a port, the --protocol's own port is checked; and the
 * text lines are aligned in columns.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { expectUsageError, runCli, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(30_000);

const workspace = workspacesRemovedAfterAll();

describe("check: exit codes and arguments", () => {
  const valid = `exit-valid.${TEST_DOMAIN}`;
  const gone = `exit-gone.${TEST_DOMAIN}`;
  let server: TlsTestServer;
  let caFile: string;
  let ws: Workspace;

  beforeAll(async () => {
    const { root, rsaIntermediate } = await testPki();
    ws = workspace();
    caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const leaf = await createLeaf({
      issuer: rsaIntermediate,
      dnsNames: [valid],
      notBefore: new Date(Date.now() - 10 * DAY),
      notAfter: new Date(Date.now() + 60 * DAY + 3_600_000),
    });
    server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  });

  afterAll(async () => {
    await server?.close();
  });

  const env = (extra: Record<string, string> = {}) => ({
    ...ws.env,
    CERTKEEPER_RESOLVE: `${valid}=127.0.0.1,${gone}=none`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_TLS_TIMEOUT: "5s",
    ...extra,
  });

  test("the worst status decides the exit code, whichever target comes last", async () => {
    const result = await runCli(["check", `${gone}:443`, `${valid}:${server.port}`], { env: env() });
    expect(result.stdout.trimEnd().split("\n").map((line) => line.split(/\s+/)[0])).toEqual(["unreachable", "valid"]);
    expect(result.code).toBe(2);
  });

  test("the text lines are aligned: every target starts in the same column", async () => {
    const result = await runCli(["check", `${valid}:${server.port}`, `${gone}:443`], { env: env() });
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    const columns = lines.map((line, i) => line.indexOf(i === 0 ? valid : gone));
    expect(columns[0]).toBeGreaterThan(0);
    expect(columns[1]).toBe(columns[0]);
    // The days column is right-aligned under its widest cell, the reason column left-aligned.
    expect(lines[1]).toMatch(/^unreachable\s+-\s+dns_error\s+/);
  });

  for (const port of ["0", "65536"]) {
    test(`a target with port ${port} is a usage error (exit 3) naming the range`, async () => {
      const result = await runCli(["check", `${valid}:${port}`], { env: env() });
      expectUsageError(result, /1-65535/, 3);
    });
  }

  test("--alert-policy other than renewal or days is a usage error (exit 3) naming the flag", async () => {
    const result = await runCli(["check", `${gone}:443`, "--alert-policy", "weekly"], { env: env() });
    expectUsageError(result, /--alert-policy/, 3);
  });

  test("without --alert-policy, CERTKEEPER_ALERT_POLICY decides the policy the target is judged by", async () => {
    const result = await runCli(["check", `${gone}:443`, "--json"], { env: env({ CERTKEEPER_ALERT_POLICY: "days" }) });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ domain: gone, status: "unreachable", alertPolicy: "days" });
  });

  test("without a port, --protocol's own port is the one checked (smtp: 25, postgres: 5432)", async () => {
    for (const [protocol, port] of [["smtp", 25], ["postgres", 5432]] as const) {
      const result = await runCli(["check", gone, "--protocol", protocol, "--json"], { env: env() });
      expect(result.code).toBe(2);
      expect(JSON.parse(result.stdout)).toMatchObject({ domain: gone, port, protocol, status: "unreachable" });
    }
  });
});
