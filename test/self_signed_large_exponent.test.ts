/**
 * A self-signed leaf whose RSA key has the exponent 2^32 + 1 (which BoringSSL and OpenSSL verify under)
 * is `self_signed` (CONTRACT §5: its issuer is its subject and its signature verifies with its own
 * key), not `untrusted_issuer`. Needs the `openssl` command.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
const servers: TlsTestServer[] = [];
const dir = mkdtempSync(join(tmpdir(), "self-signed-exponent-"));
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
  rmSync(dir, { recursive: true, force: true });
});

test("a self-signed leaf with RSA exponent 2^32+1 is self_signed, not untrusted_issuer", async () => {
  const domain = `self-e.${TEST_DOMAIN}`;
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  execFileSync("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-pkeyopt", "rsa_keygen_pubexp:4294967297", "-out", key], { stdio: "ignore" });
  execFileSync("openssl", ["req", "-x509", "-new", "-key", key, "-subj", `/CN=${domain}`, "-addext", `subjectAltName=DNS:${domain}`, "-days", "200", "-out", cert], { stdio: "ignore" });
  // The signature does verify under its own key:
  expect(execFileSync("openssl", ["verify", "-CAfile", cert, cert]).toString()).toContain("OK");

  const server = await startTlsServer({ cert: readFileSync(cert, "utf8"), key: readFileSync(key, "utf8") });
  servers.push(server);
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const got = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
  expect({ status: got.status, statusReason: got.statusReason }).toEqual({ status: "invalid", statusReason: "self_signed" });
});
