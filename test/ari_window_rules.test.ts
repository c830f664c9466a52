/**
 * CONTRACT §19's rules for a CA's suggested window, against a CA's ARI service
 * (test/support/ari_server.ts), each at its boundary:
 * - a first window is a request for early replacement only when it *ends* before the lifetime's
 *   midpoint: one that starts before it and ends after it is an ordinary deadline;
 * - "a window whose end is not after its start […] is an error": an empty or reversed window well
 *   inside the leaf's lifetime is not used (the lifetime rule, no event). (The older "ends before it
 *   starts" case lies after notAfter, which another rule already refuses.)
 */
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { certIdOf, rfc3339, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world, served } = worlds;
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

async function eventTypes(h: Harness, id: string): Promise<string[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id).reverse().map((e) => e.type);
}

const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;

describe("a first window is a request only when it ends before the lifetime's midpoint (CONTRACT §19)", () => {
  test("starting before the midpoint and ending after it: the deadline, not a request", async () => {
    const w = await world();
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    // The midpoint is 35 days from now.
    const domain = `straddles-midpoint.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, { notBefore, notAfter });
    const start = now + 30 * DAY;
    const end = now + 40 * DAY;
    ari.answer(certIdOf(leaf), { kind: "window", start, end });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect({ status: got.status, statusReason: got.statusReason, renewal: got.renewal, events: await eventTypes(w.h, added.id) }).toMatchObject({
      status: "valid",
      statusReason: null,
      renewal: { deadline: new Date(end).toISOString(), source: "ari", window: { start: new Date(start).toISOString(), end: new Date(end).toISOString() }, state: "not_due" },
      events: [],
    });
  });

  test("ending before the midpoint: a request, announced once", async () => {
    const w = await world();
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    const domain = `before-midpoint.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, { notBefore, notAfter });
    ari.answer(certIdOf(leaf), { kind: "window", start: now + 20 * DAY, end: now + 30 * DAY });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect([got.status, got.statusReason, got.renewal.state, await eventTypes(w.h, added.id)]).toEqual(["expiring", "renewal_requested", "requested", ["certificate.renewal_requested"]]);
  });
});

describe("a suggested window whose end is not after its start is an error (CONTRACT §19)", () => {
  test.each([
    ["empty", 0],
    ["reversed", -DAY],
  ] as const)("a window %s, inside the lifetime: the lifetime rule, no event", async (label, length) => {
    const w = await world();
    const now = whole(Date.now());
    const notBefore = now - 10 * DAY;
    const notAfter = now + 80 * DAY;
    const domain = `window-${label}.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain, { notBefore, notAfter });
    // Inside the lifetime, after its midpoint: as a window it would be the deadline, no request.
    const start = now + 50 * DAY;
    ari.answer(certIdOf(leaf), { kind: "raw", contentType: "application/json", body: JSON.stringify({ suggestedWindow: { start: rfc3339(start), end: rfc3339(start + length) } }) });
    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(ari.requests.some((r) => r.certId === certIdOf(leaf))).toBe(true);
    expect({ status: got.status, renewal: got.renewal, events: await eventTypes(w.h, added.id) }).toEqual({
      status: "valid",
      renewal: {
        deadline: new Date(notBefore + Math.ceil((notAfter - notBefore) * 0.75)).toISOString(),
        source: "lifetime",
        window: null,
        explanationUrl: null,
        state: "not_due",
        checkedAt: null,
      },
      events: [],
    });
  });
});
