/**
 * CONTRACT §19 held against a CA that asked for early replacement and then, while the same leaf
 * is still served, stops naming `renewalInfo` in its directory (a CA shedding load during the very
 * incident it announced, or a sloppy deploy of its directory).
 *
 * CONTRACT §19: "A window ending before the lifetime midpoint on the first answer for a serial, or
 * ending earlier than the previous answer's window for it, means the CA asks for early replacement
 * (a pending mass revocation, usually): one `certificate.renewal_requested` per serial and window end
 * (`data: { window, explanationUrl }`), `renewal.state: "requested"`, status `expiring` with
 * `statusReason: "renewal_requested"` until a new leaf is served, under both policies."
 *
 * The directory losing its renewalInfo may take the window away (§19: "no renewalInfo in it:
 * `source: "lifetime"`"), but not the CA's request: no new leaf was served. Nor does it make the CA's
 * previous answer for the serial unsaid: a window that ends earlier than it, once the directory names
 * renewalInfo again, is a request too.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

async function events(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).reverse().map((e) => e.type);
}

for (const alertPolicy of ["renewal", "days"] as const) {
  test(`${alertPolicy} policy: a request for early replacement stands while the same leaf is served, after the directory drops renewalInfo`, async () => {
    const w = await worlds.world();
    const domain = `request-outlives-directory-${alertPolicy}.${TEST_DOMAIN}`;
    // 10 days old, 80 days left: the midpoint is 35 days from now.
    const { leaf, server } = await worlds.served(domain);
    const certId = certIdOf(leaf);
    const normal = whole(Date.now() + 50 * DAY);
    ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertPolicy } }), 201);

    // The CA asks for replacement within 3 days (a pending mass revocation).
    const asked = whole(w.clock.now() + 3 * DAY);
    ari.answer(certId, { kind: "window", start: asked - DAY, end: asked, retryAfter: "60", explanationUrl: "https://ca.example/incident" });
    w.clock.advance(2 * MINUTE);
    const requested = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect([requested.status, requested.statusReason, requested.renewal.state]).toEqual(["expiring", "renewal_requested", "requested"]);

    // A day later (past the directory's 24 hours in memory) the directory no longer names renewalInfo.
    ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", newAccount: "https://ca.example/account", newOrder: "https://ca.example/order" }));
    try {
      w.clock.advance(25 * HOUR);
      const later = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
      // The same leaf is still served: the request stands.
      expect({ serialNumber: later.serialNumber, status: later.status, statusReason: later.statusReason, state: later.renewal.state }).toEqual({
        serialNumber: requested.serialNumber,
        status: "expiring",
        statusReason: "renewal_requested",
        state: "requested",
      });
      expect(await events(w.h, added.id)).toEqual(["certificate.renewal_requested"]);
      const listed = expectData(await w.h.request("GET", "/v1/certificates?renewal=requested"), 200) as any[];
      expect(listed.map((c) => c.id)).toContain(added.id);
    } finally {
      ari.directory(null);
    }
  });
}

test("a window ending earlier than the previous answer's, after the directory dropped renewalInfo for a while, is a request", async () => {
  const w = await worlds.world();
  const domain = `earlier-after-directory-gap.${TEST_DOMAIN}`;
  // 10 days old, 80 days left: the midpoint is 35 days from now.
  const { leaf, server } = await worlds.served(domain);
  const certId = certIdOf(leaf);
  const normal = whole(Date.now() + 50 * DAY);
  ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
  const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  expect((await w.h.request("GET", `/v1/certificates/${added.id}`)).body.data.renewal).toMatchObject({ source: "ari", state: "not_due" });

  // The directory names no renewalInfo for a day, then names it again.
  ari.directory(JSON.stringify({ newNonce: "https://ca.example/nonce", newAccount: "https://ca.example/account", newOrder: "https://ca.example/order" }));
  try {
    w.clock.advance(25 * HOUR);
    expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  } finally {
    ari.directory(null);
  }
  // Back: the window now ends 7 days earlier than the CA's previous answer, still 10 days after the midpoint.
  const earlier = whole(normal - 8 * DAY);
  ari.answer(certId, { kind: "window", start: earlier, end: earlier + DAY, retryAfter: "60" });
  w.clock.advance(25 * HOUR);
  const checked = expectData(await w.h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(checked.renewal).toMatchObject({ source: "ari", deadline: new Date(earlier + DAY).toISOString() });
  expect([checked.status, checked.statusReason, checked.renewal.state, await events(w.h, added.id)]).toEqual([
    "expiring",
    "renewal_requested",
    "requested",
    ["certificate.renewal_requested"],
  ]);
});
