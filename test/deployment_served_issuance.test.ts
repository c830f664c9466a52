/**
 * CONTRACT §20: `deployment` is about an issuance "with a later notBefore" than the served leaf. A watch
 * that records the very certificate already served (same names, same notBefore: CT logs it once it is
 * issued, often after it is deployed) is no pending deployment, even while the host does not answer:
 * `deployment` stays null.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR } from "../core/base/mod.ts";
import { namesKey } from "../core/deployment/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("the served leaf's own issuance recorded by a watch is not pending, the host answering or not", async () => {
  const domain = `same-issuance.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const clock = new FakeClock(Date.now());
  const h = await createHarness({ clock, config: { alertPolicy: "renewal", revocation: false, ari: false, tlsTimeoutMs: 1000 } });
  cleanups.push(() => h.close());
  const now = clock.now();
  // Whole seconds, as X.509 keeps them: the issuance's notBefore is the served leaf's exactly.
  const notBefore = Math.floor((now - 10 * DAY) / 1000) * 1000;
  const notAfter = notBefore + 90 * DAY;
  const served = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter) });
  const server = await startTlsServer({ cert: chainPem(served, rsaIntermediate), key: served.keyPem });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const scope = { organizationId: h.org.id, mode: "live" as const };
  expect((await h.store.certificates.get(scope, added.id))!.details.notBefore).toBe(notBefore);

  // The server goes away: no endpoint answers.
  await server.close();
  clock.advance(HOUR);
  expect(expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200).status).toBe("unreachable");

  // A watch records the served certificate itself.
  const same = { issuedAt: notBefore, notAfter, fingerprintSha256: null, issuer: "certkeeper Test RSA CA", seenAt: clock.now(), announced: false };
  expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment: same })).toBe(0);
  expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toBeNull();

  // A later issuance of the same names is pending (the rule is the notBefore, not the names).
  const later = { ...same, issuedAt: notBefore + 60 * 1000 };
  expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment: later })).toBe(1);
  expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).deployment).toMatchObject({ issuedAt: new Date(later.issuedAt).toISOString(), servedBy: 0, endpoints: 0 });
});
