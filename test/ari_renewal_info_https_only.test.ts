/**
 * The renewalInfo URL an ACME directory names (RFC 9773 §3, §4.1), against a sloppy CA
 * whose directory, served over HTTPS, names a renewalInfo URL with the `http` scheme.
 *
 * RFC 8555 §6.1, which RFC 9773 extends: "Each ACME function is accomplished by the client sending a
 * sequence of HTTPS requests to the server [RFC2818], carrying JSON messages [RFC8259]." RFC 9773
 * Security Considerations (§6): "The extensions to the ACME protocol described in this document
 * build upon the Security Considerations and threat model defined in Section 10.1 of [RFC8555]."
 * CONTRACT §19: "ARI errors never change a status and never raise an event".
 *
 * Over cleartext anyone on the path answers for the CA: here, a window already in the past, which
 * would put the certificate in `renewal_requested` and raise `certificate.renewal_requested`. The
 * renewal information request must not go out in the clear.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR } from "../core/base/mod.ts";
import { expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { ariWorlds } from "./support/ari_world.ts";
import { startHostileCa, type HostileCa } from "./support/ari_scripted_ca.ts";

setDefaultTimeout(60_000);

const worlds = ariWorlds();
let ca: HostileCa;
let cleartext: http.Server;
let cleartextOrigin = "";
const overCleartext: Array<{ method: string; url: string }> = [];

beforeAll(async () => {
  ca = await startHostileCa((await testPki()).rsaIntermediate);
  // What answers on the cleartext path (the CA, or anyone between): a window that ended an hour ago.
  cleartext = http.createServer((req, res) => {
    overCleartext.push({ method: req.method ?? "", url: req.url ?? "" });
    const body = JSON.stringify({ suggestedWindow: { start: new Date(Date.now() - 2 * HOUR).toISOString(), end: new Date(Date.now() - HOUR).toISOString() } });
    res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
    res.end(body);
  });
  await new Promise<void>((resolve) => cleartext.listen(0, "127.0.0.1", resolve));
  cleartextOrigin = `http://127.0.0.1:${(cleartext.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await ca.close();
  await new Promise((resolve) => cleartext.close(resolve));
});

test("an HTTPS directory naming an http:// renewalInfo: no request in the clear, no status or event from its answer", async () => {
  ca.directory({ newNonce: `${ca.origin}/acme/new-nonce`, newAccount: `${ca.origin}/acme/new-account`, newOrder: `${ca.origin}/acme/new-order`, renewalInfo: `${cleartextOrigin}/acme/renewal-info` });
  const w = await worlds.world({ acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ca.directoryUrl }] });
  const domain = `cleartext-ari.${TEST_DOMAIN}`;
  const now = Date.now();
  const { server } = await worlds.served(domain, { notBefore: now - 10 * DAY, notAfter: now + 80 * DAY });
  const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
  const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
  const events = (expectData(await w.h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter((e) => e.certificateId === added.id).map((e) => e.type);
  expect({
    cleartextRequests: overCleartext,
    status: got.status,
    statusReason: got.statusReason,
    state: got.renewal.state,
    source: got.renewal.source,
    events,
  }).toEqual({ cleartextRequests: [], status: "valid", statusReason: null, state: "not_due", source: "lifetime", events: [] });
});
