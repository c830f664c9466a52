/**
 * Scale-out (CONTRACT §19, §9): two `serve` processes on one real sqld ask a CA's renewal information
 * service (test/support/ari_server.ts) about one leaf. "Answers are shared by every certificate and
 * organization that serves the same leaf, and across processes (kept in the database). The next
 * request for a leaf comes after the answer's Retry-After."
 *
 * Two organizations add the same served certificate at the same moment, one through each process,
 * with a CA answering in a few hundred milliseconds (as real ones may): one process claims the leaf
 * in the database and asks, the other waits for its answer. The CA is asked once, and both
 * certificates get its window (before the claim, both missed the shared cache and asked).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Admin } from "../core/accounts/admin.ts";
import { DAY, systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startSqld } from "./support/sqld.ts";
import { callServe, startServe } from "./support/cli.ts";
import { certIdOf, startAriServer } from "./support/ari_server.ts";

setDefaultTimeout(60_000);

const dir = mkdtempSync(join(tmpdir(), "certkeeper-ari-two-"));
const cleanups: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  while (cleanups.length) await cleanups.pop()!().catch(() => {});
  rmSync(dir, { recursive: true, force: true });
});


describe("renewal information across two processes on one sqld", () => {
  test("one leaf, added at once by two organizations through two processes: the CA is asked once", async () => {
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    const ari = await startAriServer({ tlsIssuer: rsaIntermediate });
    cleanups.push(() => ari.close());
    const sqld = await startSqld();
    cleanups.push(() => sqld.close());

    const domain = `ari-shared.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(Date.now() - 10 * DAY), notAfter: new Date(Date.now() + 80 * DAY) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    cleanups.push(() => server.close());
    // A CA that takes about half a second to answer (a byte every 5 ms; no Retry-After: 6 hours).
    ari.answer(certIdOf(leaf), { kind: "trickle", everyMs: 5 });

    const setup = await openLibsqlStore({ url: sqld.url });
    const admin = new Admin(setup, systemClock);
    const keys: string[] = [];
    for (const name of ["ARI One", "ARI Two"]) {
      const org = await admin.createOrganization({ name, plan: "pro" });
      const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
      keys.push((await admin.createApiKey({ userId: user.id, name: "ari", mode: "live" })).key);
    }
    await setup.close();

    const env = {
      CERTKEEPER_DATABASE_URL: sqld.url,
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
      CERTKEEPER_EXTRA_CA_FILE: caFile,
      CERTKEEPER_TLS_TIMEOUT: "5s",
      CERTKEEPER_REVOCATION: "off",
      CERTKEEPER_DNS_SERVERS: "off",
      CERTKEEPER_ACME_DIRECTORIES: `certkeeper Test RSA CA=${ari.directoryUrl}`,
    };
    const a = await startServe({ env });
    cleanups.push(() => a.stop("SIGKILL"));
    const b = await startServe({ env });
    cleanups.push(() => b.stop("SIGKILL"));

    const [first, second] = await Promise.all([
      callServe(a, keys[0]!, "POST", "/v1/certificates", { domain, port: server.port }),
      callServe(b, keys[1]!, "POST", "/v1/certificates", { domain, port: server.port }),
    ]);
    expect([first.status, second.status]).toEqual([201, 201]);
    // Both certificates have the CA's window (the answer is shared)…
    const one = (await callServe(a, keys[0]!, "GET", `/v1/certificates/${first.body.data.id}`)).body.data;
    const two = (await callServe(b, keys[1]!, "GET", `/v1/certificates/${second.body.data.id}`)).body.data;
    expect([one.renewal.source, two.renewal.source]).toEqual(["ari", "ari"]);
    // …and the CA was asked about the leaf once: the answer's Retry-After (6 hours) holds for both processes.
    const asked = ari.requests.filter((r) => r.certId === certIdOf(leaf));
    expect(asked.map((r) => r.at - asked[0]!.at)).toEqual([0]);
  });
});
