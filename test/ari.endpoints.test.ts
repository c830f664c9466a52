/**
 * A CA's request for early replacement (CONTRACT §19) of a leaf one of several addresses serves, not
 * the certificate-level (earliest-expiring) one: a rollout under way when the CA asks. The status is
 * judged over every endpoint (§11), so it turns expiring / renewal_requested; the request is announced
 * once, naming the address, as a revocation of such a leaf is.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);
const worlds = ariWorlds();
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});
const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

test("a request about the leaf the second address serves: one certificate.renewal_requested naming that address and serial, not again at the next check", async () => {
  const domain = `multi-ari.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const { h, clock } = await worlds.world({ resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }] });

  const now = Date.now();
  // Node A: the older leaf (expires first: the certificate-level one). Node B: the newer one.
  const older = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY) });
  const newer = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - DAY), notAfter: new Date(now + 89 * DAY) });
  const a = await startTlsServer({ cert: chainPem(older, rsaIntermediate), key: older.keyPem, host: "127.0.0.1" });
  const b = await startTlsServer({ cert: chainPem(newer, rsaIntermediate), key: newer.keyPem, host: "127.0.0.2", port: a.port });
  worlds.cleanups.push(() => a.close(), () => b.close());
  const normal = whole(now + 50 * DAY);
  ari.answer(certIdOf(older), { kind: "window", start: normal, end: normal + DAY, retryAfter: "60" });
  ari.answer(certIdOf(newer), { kind: "window", start: normal + 9 * DAY, end: normal + 10 * DAY, retryAfter: "60" });

  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
  // The CA asks for the newer leaf to be replaced (a mass revocation of recent issuance).
  const past = whole(now - HOUR);
  ari.answer(certIdOf(newer), { kind: "window", start: past - HOUR, end: past, explanationUrl: "https://ca.example/incident" });
  clock.advance(2 * MINUTE);
  const checked = expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  const requested = async () =>
    (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === added.id && e.type === "certificate.renewal_requested");
  expect([checked.status, checked.statusReason]).toEqual(["expiring", "renewal_requested"]);
  const first = await requested();
  expect(first).toHaveLength(1);
  expect(first[0].data.endpoint).toEqual({ address: "127.0.0.2", serialNumber: newer.cert.serialNumber.toUpperCase().match(/../g)!.join(":"), expiresAt: new Date(whole(now + 89 * DAY)).toISOString() });
  expect(first[0].data.window).toEqual({ start: new Date(past - HOUR).toISOString(), end: new Date(past).toISOString() });
  expect(first[0].data.explanationUrl).toBe("https://ca.example/incident");
  // The certificate-level leaf's own request state is unchanged; asked again, nothing new.
  clock.advance(2 * MINUTE);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await requested()).toHaveLength(1);
});
