/**
 * PagerDuty incidents of the Part III kinds, through the real Deliverer and a PagerDuty
 * receiver on 127.0.0.1. What decides the on-call's view is the last action PagerDuty got per dedup key.
 */
import { afterEach, expect, test } from "bun:test";
import { certificate, CERT_ID, world, type World } from "./support/notify_world.ts";

let w: World | undefined;
afterEach(async () => {
  await w?.close();
  w = undefined;
});

/** The last action per dedup key, in the order PagerDuty received them. */
function lastAction(world: World): Record<string, string> {
  const last: Record<string, string> = {};
  for (const r of world.at("/pd/v2/enqueue")) if (r.json?.dedup_key) last[r.json.dedup_key] = r.json.event_action;
  return last;
}

test("a renewal's resolve retried after the new leaf's renewal_blocked was triggered does not close the new incident", async () => {
  // CONTRACT Part III: "PagerDuty dedup keys: `renewal` for the overdue, requested and blocked kinds,
  // resolved on `certificate.renewed`"; §22: "one certificate.renewal_blocked per serial and CAA record set".
  // Sequence: renewed (serial 1 → 2) is raised; PagerDuty answers its resolve 500; a later check finds
  // CAA forbidding the issuer of serial 2: renewal_blocked for serial 2, delivered. The renewed's
  // resolve, retried, is older news than that trigger and must not resolve it.
  w = await world(["pagerduty"]);
  w.http.answer = (n) => ({ status: n === 0 ? 500 : 202, body: "{}" });
  const renewedCert = certificate({ status: "valid", statusReason: null, serialNumber: "06:00:01", expiresAt: "2026-06-19T09:00:00.000Z", daysUntilExpiry: 45 });
  await w.record("certificate.renewed", { certificate: renewedCert, previous: { serialNumber: "04:A1:B2", expiresAt: "2026-05-15T09:00:00.000Z" } });
  await w.deliverAll();
  expect(w.http.requests).toHaveLength(1); // the resolve, refused

  w.clock.advance(10_000);
  await w.record("certificate.renewal_blocked", {
    certificate: renewedCert,
    caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], issuerDomain: "letsencrypt.org" },
  });
  await w.deliverAll();
  w.clock.advance(120_000);
  await w.deliverAll();
  const actions = w.http.requests.map((r) => `${r.json.event_action} ${r.json.dedup_key}`);
  expect(actions).toContain(`trigger ${CERT_ID}:renewal`);
  // The on-call view: the CAA problem of serial 2 is open.
  expect(lastAction(w)[`${CERT_ID}:renewal`]).toBe("trigger");
});

test("a renewal's resolve retried after the next issuance's not_deployed was triggered does not close it", async () => {
  // CONTRACT Part III: "`not_deployed`, resolved once every endpoint serves the issuance". A resolve
  // from an earlier renewal, arriving after a later issuance's not_deployed trigger, resolves an
  // incident whose issuance is still not deployed (and §20 raises it once per issuance: it never
  // comes back).
  w = await world(["pagerduty"]);
  w.http.answer = (n) => ({ status: n === 0 ? 503 : 202, body: "{}" });
  const renewedCert = certificate({ status: "valid", statusReason: null, serialNumber: "06:00:01", expiresAt: "2026-06-19T09:00:00.000Z", daysUntilExpiry: 45 });
  await w.record("certificate.renewed", { certificate: renewedCert, previous: { serialNumber: "04:A1:B2", expiresAt: "2026-05-15T09:00:00.000Z" } });
  await w.deliverAll();
  w.clock.advance(30_000);
  await w.record("certificate.not_deployed", {
    certificate: renewedCert,
    deployment: { issuedAt: "2026-05-04T09:00:00.000Z", fingerprintSha256: "EE:FF", notAfter: "2026-06-18T09:00:00.000Z", issuer: "Let's Encrypt", seenAt: "2026-05-04T09:30:00.000Z", servedBy: 1, endpoints: 2 },
    lagging: ["127.0.0.2"],
  });
  await w.deliverAll();
  w.clock.advance(120_000);
  await w.deliverAll();
  expect(w.http.requests.map((r) => `${r.json.event_action} ${r.json.dedup_key}`)).toContain(`trigger ${CERT_ID}:not_deployed`);
  expect(lastAction(w)[`${CERT_ID}:not_deployed`]).toBe("trigger");
});
