/**
 * `check` exits "3 called wrongly (or `CERTKEEPER_EXTRA_CA_FILE` unusable)", and the commands
 * that connect "stop naming `CERTKEEPER_EXTRA_CA_FILE` when its file is missing or unreadable"
 * (docs/cli.md). An empty file already is refused so (exit 3, "holds no PEM certificate"); a file whose
 * only PEM block is no certificate (a copy cut off mid-way, a paste gone wrong) holds no certificate
 * either, and is refused the same way: it is never taken as it is, reporting CRITICAL (exit 2,
 * untrusted_issuer) for servers that are fine.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { runCli, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();
const domain = `ca-file.${TEST_DOMAIN}`;
let server: TlsTestServer;
let ws: Workspace;
let rootPem: string;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  rootPem = root.certPem;
  ws = workspace();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(() => server?.close());

const env = (caFile: string) => ({
  ...ws.env,
  CERTKEEPER_RESOLVE: `${domain}=127.0.0.1`,
  CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
  CERTKEEPER_DNS_SERVERS: "127.0.0.1:1",
  CERTKEEPER_ARI: "off",
  CERTKEEPER_TLS_TIMEOUT: "5s",
  CERTKEEPER_EXTRA_CA_FILE: caFile,
});

test("the real root: check is valid", async () => {
  const file = join(ws.dir, "root.pem");
  writeFileSync(file, rootPem);
  const result = await runCli(["check", `${domain}:${server.port}`], { env: env(file) });
  expect(result.code).toBe(0);
});

test("a root cut off mid-way (its PEM block holds no certificate): exit 3 naming CERTKEEPER_EXTRA_CA_FILE, not a CRITICAL for the server", async () => {
  const file = join(ws.dir, "cut.pem");
  const body = rootPem.split("\n").filter((l) => l !== "" && !l.startsWith("-----"));
  writeFileSync(file, `-----BEGIN CERTIFICATE-----\n${body.slice(0, Math.ceil(body.length / 2)).join("\n")}\n-----END CERTIFICATE-----\n`);
  const result = await runCli(["check", `${domain}:${server.port}`], { env: env(file) });
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 3, stdout: "" });
  expect(result.stderr).toContain("CERTKEEPER_EXTRA_CA_FILE");
});

test("a PEM block of garbage: exit 3 naming CERTKEEPER_EXTRA_CA_FILE", async () => {
  const file = join(ws.dir, "garbage.pem");
  writeFileSync(file, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n");
  const result = await runCli(["check", `${domain}:${server.port}`, "--json"], { env: env(file) });
  expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 3, stdout: "" });
  expect(result.stderr).toContain("CERTKEEPER_EXTRA_CA_FILE");
});
