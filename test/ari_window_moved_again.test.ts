/**
 * CONTRACT §19: a CA's request for early replacement raises "one `certificate.renewal_requested` per
 * serial and window end". A CA that, after asking once, moves the window's end earlier again asks again,
 * and that second request is announced (once), for the certificate-level leaf and for a leaf another
 * address serves (CONTRACT §11). A real ARI server, TLS server and certkeeper under the renewal policy,
 * on a fake clock.
 */
import { beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, MINUTE, SECOND } from "../core/base/mod.ts";
import { expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { certIdOf, type AriServer } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
const { world, served } = worlds;
let ari: AriServer;
beforeAll(() => {
  ari = worlds.ari();
});

const whole = (ms: number) => Math.floor(ms / SECOND) * SECOND;
const iso = (ms: number) => new Date(ms).toISOString();

async function requested(h: Harness, id: string): Promise<any[]> {
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[];
  return list.filter((e) => e.certificateId === id && e.type === "certificate.renewal_requested").reverse();
}

for (const alertPolicy of ["renewal", "days"] as const) {
  test(`${alertPolicy} policy: a second request for the same serial, with an earlier window end, is announced once more`, async () => {
    const w = await world();
    const domain = `asked-twice-${alertPolicy}.${TEST_DOMAIN}`;
    const { leaf, server } = await served(domain);
    const certId = certIdOf(leaf);
    const normal = whole(Date.now() + 40 * DAY);
    ari.answer(certId, { kind: "window", start: normal, end: normal + 2 * DAY, retryAfter: "60" });
    const cert = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertPolicy } }), 201);
    expect(await requested(w.h, cert.id)).toEqual([]);

    // The CA asks for early replacement: the window ends in 2 days.
    const first = whole(w.clock.now() + 2 * DAY);
    ari.answer(certId, { kind: "window", start: first - DAY, end: first, retryAfter: "60", explanationUrl: "https://ca.example/first" });
    w.clock.advance(2 * MINUTE);
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    expect((await requested(w.h, cert.id)).map((e) => e.data.window.end)).toEqual([iso(first)]);

    // The same answer again: nothing more.
    w.clock.advance(2 * MINUTE);
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    expect(await requested(w.h, cert.id)).toHaveLength(1);

    // The CA moves the end earlier again (the revocation comes sooner): a new request, announced.
    const second = whole(w.clock.now() + 12 * HOUR);
    ari.answer(certId, { kind: "window", start: second - HOUR, end: second, retryAfter: "60", explanationUrl: "https://ca.example/second" });
    w.clock.advance(2 * MINUTE);
    const checked = expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    expect([checked.status, checked.statusReason, checked.renewal.state]).toEqual(["expiring", "renewal_requested", "requested"]);
    const events = await requested(w.h, cert.id);
    expect(events.map((e) => [e.data.window.end, e.data.explanationUrl])).toEqual([
      [iso(first), "https://ca.example/first"],
      [iso(second), "https://ca.example/second"],
    ]);

    // And that one only once too.
    w.clock.advance(2 * MINUTE);
    expectData(await w.h.request("POST", `/v1/certificates/${cert.id}/check`), 200);
    expect(await requested(w.h, cert.id)).toHaveLength(2);
  });
}

test("a leaf another address serves: a second request with an earlier window end is announced once more, naming that address", async () => {
  const domain = `multi-asked-twice.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const { h, clock } = await world({ resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }] });
  const now = Date.now();
  // Node A: the older leaf (the certificate-level one, expiring first). Node B: a newer one.
  const older = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY) });
  const newer = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - DAY), notAfter: new Date(now + 89 * DAY) });
  const a = await startTlsServer({ cert: chainPem(older, rsaIntermediate), key: older.keyPem, host: "127.0.0.1" });
  const b = await startTlsServer({ cert: chainPem(newer, rsaIntermediate), key: newer.keyPem, host: "127.0.0.2", port: a.port });
  worlds.cleanups.push(() => a.close(), () => b.close());
  const normal = whole(now + 50 * DAY);
  ari.answer(certIdOf(older), { kind: "window", start: normal, end: normal + DAY, retryAfter: "60" });
  ari.answer(certIdOf(newer), { kind: "window", start: normal + 9 * DAY, end: normal + 10 * DAY, retryAfter: "60" });
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
  const requestsOf = async () =>
    (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[])
      .filter((e) => e.certificateId === added.id && e.type === "certificate.renewal_requested")
      .reverse()
      .map((e) => [e.data.endpoint?.address, e.data.window.end]);

  const first = whole(clock.now() + 2 * DAY);
  ari.answer(certIdOf(newer), { kind: "window", start: first - DAY, end: first, retryAfter: "60" });
  clock.advance(2 * MINUTE);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await requestsOf()).toEqual([["127.0.0.2", iso(first)]]);

  const second = whole(clock.now() + 12 * HOUR);
  ari.answer(certIdOf(newer), { kind: "window", start: second - HOUR, end: second, retryAfter: "60" });
  clock.advance(2 * MINUTE);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  clock.advance(2 * MINUTE);
  expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200);
  expect(await requestsOf()).toEqual([
    ["127.0.0.2", iso(first)],
    ["127.0.0.2", iso(second)],
  ]);
});
