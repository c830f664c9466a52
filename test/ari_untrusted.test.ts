/**
 * Which leaves the CA is asked about (CONTRACT §19, docs/renewal.md): a leaf whose chain does not lead
 * to a trusted root is never asked about (as for revocation), even when its issuer is named like a CA
 * with a directory and it carries an Authority Key Identifier: anyone can make such a leaf, and the
 * answers are shared. Its deadline follows the lifetime.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import "reflect-metadata";
import { DAY, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf, createRootCa } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world } = worlds;
let ari: AriServer;
const closers: Array<() => unknown> = [];
beforeAll(() => {
  ari = worlds.ari();
});
afterAll(async () => {
  for (const close of closers) await close();
});

test("a leaf of an untrusted CA named like the test CA, with an AKI: not asked, the lifetime rule, no event", async () => {
  const w = await world();
  const now = Math.floor(Date.now() / SECOND) * SECOND;
  const notBefore = now - 10 * DAY;
  const notAfter = now + 80 * DAY;
  const impostor = await createRootCa({ keyType: "rsa", name: "CN=certkeeper Test RSA CA, O=someone else" });
  const domain = `untrusted-ari.${TEST_DOMAIN}`;
  const leaf = await createLeaf({ issuer: impostor, dnsNames: [domain], notBefore: new Date(notBefore), notAfter: new Date(notAfter) });
  const server = await startTlsServer({ cert: chainPem(leaf, impostor), key: leaf.keyPem });
  closers.push(() => server.close());
  const certId = certIdOf(leaf);
  // What the CA would say, if asked: an early-replacement window (before the lifetime's midpoint).
  ari.answer(certId, { kind: "window", start: now + DAY, end: now + 2 * DAY });
  const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
  expect(ari.requests.filter((r) => r.certId === certId).length).toBe(0);
  expect(got.renewal).toMatchObject({ source: "lifetime", window: null, state: "not_due", deadline: new Date(notBefore + Math.ceil((notAfter - notBefore) * 0.75)).toISOString() });
  const events = (expectData(await w.h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === added.id).map((e) => e.type);
  expect(events).not.toContain("certificate.renewal_requested");
});
