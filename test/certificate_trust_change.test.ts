/**
 * The roots a chain is judged against (CONTRACT §1: the platform's roots plus CERTKEEPER_EXTRA_CA_FILE)
 * can change between two checks of an unchanged chain: an operator adds an internal root and restarts,
 * or removes one. The judgement stored with the certificate is made again then, not kept because the
 * chain is the same (a leaf signed by a root directly has no intermediate whose expiry would end it);
 * and a judgement stored by a release that judged chains by other rules is made again once.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { TlsCertificateSource } from "../core/monitor/certificate_source.ts";
import { TrustStore } from "../core/tls/trust_store.ts";

const DOMAIN = `internal.${TEST_DOMAIN}`;
let server: TlsTestServer;
beforeAll(async () => {
  const { root } = await testPki();
  const leaf = await createLeaf({ issuer: root, dnsNames: [DOMAIN] }); // signed by the root: no intermediate
  server = await startTlsServer({ cert: chainPem(leaf), key: leaf.keyPem });
});
afterAll(() => server.close());

function source(trust: TrustStore) {
  return new TlsCertificateSource({ trust, retrieve: { timeoutMs: 2000, rules: [{ pattern: DOMAIN, address: "127.0.0.1" }], allowPrivateTargets: true } });
}

test("after the internal root is added to the trust store (restart), the stored untrusted judgement is not kept", async () => {
  const { root } = await testPki();
  const target = { domain: DOMAIN, port: server.port };
  const before = await source(new TrustStore([])).inspect(target);
  if (!before.ok) throw new Error(before.message);
  expect(before.problem).toBe("untrusted_issuer");
  const after = await source(new TrustStore([root.certPem])).inspect(target, { fingerprint: before.fingerprint, details: before.details, problem: before.problem, endpoints: before.endpoints });
  expect(after.ok && after.problem).toBe(null);
});

test("after the root is removed from the trust store, the stored trusted judgement is not kept", async () => {
  const { root } = await testPki();
  const target = { domain: DOMAIN, port: server.port };
  const before = await source(new TrustStore([root.certPem])).inspect(target);
  if (!before.ok) throw new Error(before.message);
  expect(before.problem).toBe(null);
  const after = await source(new TrustStore([])).inspect(target, { fingerprint: before.fingerprint, details: before.details, problem: before.problem, endpoints: before.endpoints });
  expect(after.ok && after.problem).toBe("untrusted_issuer");
});

test("a judgement stored by a release that judged chains by other rules is made again at the next check, not kept", async () => {
  const { root } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const target = { domain: DOMAIN, port: server.port };
  const now = await source(trust).inspect(target);
  if (!now.ok) throw new Error(now.message);
  expect(now.problem).toBe(null);
  // What the release before stored for this very chain: judged untrusted (by its rules: an issuer
  // name in another case, say), marked with the roots' id alone.
  const stored = { ...now.details, trust: trust.id };
  const endpoints = (now.endpoints ?? []).map((endpoint) => ({ ...endpoint, details: endpoint.details && { ...endpoint.details, trust: trust.id }, problem: "untrusted_issuer" as const }));
  const after = await source(trust).inspect(target, { fingerprint: now.fingerprint, details: stored, problem: "untrusted_issuer", endpoints });
  expect(after.ok && after.problem).toBe(null);
});
