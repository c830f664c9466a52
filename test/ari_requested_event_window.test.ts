/**
 * CONTRACT §19's announcement of a CA's request for early replacement, for a certificate
 * that starts watching the leaf after the CA asked and then moved its window back later (the
 * incident over, the leaf not yet replaced).
 *
 * CONTRACT §19: "A window ending before the lifetime midpoint on the first answer for a serial, or
 * ending earlier than the previous answer's window for it, means the CA asks for early replacement
 * (a pending mass revocation, usually): one `certificate.renewal_requested` per serial and window end
 * (`data: { window, explanationUrl }`)".
 *
 * The event is the one for the window end the CA asked with: its `data.window` is that window (its
 * end is the end the announcement is keyed by), not a later, ordinary window that asks for nothing.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, MINUTE, SECOND } from "../core/base/mod.ts";
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
const iso = (ms: number) => new Date(ms).toISOString();

async function requestedData(h: Harness, id: string): Promise<any[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id && e.type === "certificate.renewal_requested").map((e) => e.data);
}

test("a certificate added after the CA asked and moved its window back: its renewal_requested carries the window that asked", async () => {
  const w = await worlds.world();
  const domain = `requested-window-data.${TEST_DOMAIN}`;
  const { leaf, server } = await worlds.served(domain);
  const certId = certIdOf(leaf);
  const normal = whole(Date.now() + 50 * DAY);
  ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
  const first = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);

  // The CA asks: replace within 3 days.
  const asked = whole(w.clock.now() + 3 * DAY);
  ari.answer(certId, { kind: "window", start: asked - DAY, end: asked, retryAfter: "60", explanationUrl: "https://ca.example/incident" });
  w.clock.advance(2 * MINUTE);
  expectData(await w.h.request("POST", `/v1/certificates/${first.id}/check`), 200);
  expect((await requestedData(w.h, first.id)).map((d) => d.window)).toEqual([{ start: iso(asked - DAY), end: iso(asked) }]);

  // The incident is over: the CA's window is an ordinary one again. The leaf is not replaced.
  ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
  w.clock.advance(2 * MINUTE);
  expectData(await w.h.request("POST", `/v1/certificates/${first.id}/check`), 200);

  // Another certificate starts watching the same leaf: the request still stands for the serial...
  const second = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, connectTo: "127.0.0.1" } }), 201);
  const got = expectData(await w.h.request("GET", `/v1/certificates/${second.id}`), 200);
  expect(got.renewal.state).toBe("requested");
  // ...and its one announcement names the window that asked, not the ordinary one.
  expect((await requestedData(w.h, second.id)).map((d) => d.window)).toEqual([{ start: iso(asked - DAY), end: iso(asked) }]);
});
