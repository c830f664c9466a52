/**
 * CONTRACT §20: `seenAt` is "when the issuance was recorded", and the grace runs from it. The same
 * issuance recorded again later (a watch seeing the precertificate and then the certificate, or a
 * search service answering it again) is not a new one: `seenAt` stays, and `certificate.not_deployed`
 * comes when the grace from the first sighting has passed, not a grace later.
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

test("the same issuance recorded twice keeps its first seenAt, and not_deployed comes a grace after it", async () => {
  const domain = `renoted.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const clock = new FakeClock(Date.now());
  const h = await createHarness({ clock, config: { alertPolicy: "renewal", revocation: false, ari: false, tlsTimeoutMs: 1000 } });
  cleanups.push(() => h.close());
  const now = clock.now();
  const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY) });
  const server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
  cleanups.push(() => server.close());
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const scope = { organizationId: h.org.id, mode: "live" as const };

  const issuedAt = Math.floor((now - HOUR) / 1000) * 1000;
  const note = (seenAt: number) => {
    const deployment = { issuedAt, notAfter: issuedAt + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper Test RSA CA", seenAt, announced: false };
    return h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment });
  };
  await note(now);
  clock.set(now + 20 * HOUR);
  await note(now + 20 * HOUR);
  const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect(got.deployment).toMatchObject({ seenAt: new Date(now).toISOString(), servedBy: 0, endpoints: 1 });

  // The grace (24 hours from the first sighting) passes with the old leaf still served.
  clock.set(now + 24 * HOUR + 1000);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  expect(list.filter((e) => e.certificateId === added.id).map((e) => e.type)).toEqual(["certificate.not_deployed"]);
});
