/**
 * Revocation per endpoint (CONTRACT §14 with §11): every distinct leaf served by an address behind a
 * name is asked about once; an endpoint whose leaf is revoked is `revoked`, so is the certificate (worst
 * first), and its serial is announced once, even when it is not the leaf the certificate-level fields
 * describe.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseResolveRules } from "../core/config/resolve_rules.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";

const ZONE = `revoked-nodes.${TEST_DOMAIN}`;
let h: Harness;
let transports: ReturnType<typeof createTransports>;
let responder: Responder;
let port: number;
const nodes: TlsTestServer[] = [];
let good: Issued;
let bad: Issued;
const serial = (issued: Issued) => issued.cert.serialNumber.toUpperCase().replace(/^00(?=[89A-F])/, "").match(/../g)!.join(":");

beforeAll(async () => {
  const { root, ecIntermediate } = await testPki();
  responder = await startResponder();
  good = await createLeaf({ issuer: ecIntermediate, dnsNames: [`*.${ZONE}`], daysLeft: 60, ocspUrls: [`${responder.url}/ocsp`] });
  bad = await createLeaf({ issuer: ecIntermediate, dnsNames: [`*.${ZONE}`], daysLeft: 120, ocspUrls: [`${responder.url}/ocsp`], freshKey: true });
  responder.answer = (request) => {
    const asked = Buffer.from(request.body).toString("hex");
    const leaf = asked.includes(bad.cert.serialNumber.replace(/^00/, "")) ? bad : good;
    return {
      body: ocspAnswer({
        leaf,
        issuer: ecIntermediate,
        status: leaf === bad ? { revoked: { at: new Date("2026-11-10T00:00:00Z"), reason: 1 } } : { good: true },
        nextUpdate: new Date(Date.now() + 3_600_000),
      }),
    };
  };
  nodes.push(await startTlsServer({ cert: chainPem(good, ecIntermediate), key: good.keyPem }));
  port = nodes[0]!.port;
  nodes.push(await startTlsServer({ cert: chainPem(bad, ecIntermediate), key: bad.keyPem, port, host: "127.0.0.3" }));
  const resolve = parseResolveRules(`*.${ZONE}=127.0.0.1|127.0.0.3,*.${TEST_DOMAIN}=127.0.0.1`);
  transports = await loopbackTransports({ resolve, tlsTimeoutMs: 2000 });
  h = await createHarness({ transports, config: { resolve } });
});

afterAll(async () => {
  await h.close();
  await transports.close();
  await Promise.all(nodes.map((node) => node.close()));
  await responder.close();
});

describe("revocation behind several addresses", () => {
  test("a revoked leaf on one node: that endpoint and the certificate are revoked; announced once; each leaf asked about once", async () => {
    const domain = `www.${ZONE}`;
    const before = responder.requests.length;
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
    for (let i = 0; i < 3; i++) await h.request("POST", `/v1/certificates/${created.id}/check`);
    const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    // The certificate-level fields describe the earliest-expiring leaf (the good one)...
    expect(cert.serialNumber).toBe(serial(good));
    expect(cert.revocation.status).toBe("good");
    // ...the status is the worst of the endpoints.
    expect([cert.status, cert.statusReason]).toEqual(["revoked", "revoked"]);
    expect(cert.endpoints.map((e: any) => [e.address, e.status, e.serialNumber])).toEqual([
      ["127.0.0.1", "valid", serial(good)],
      ["127.0.0.3", "revoked", serial(bad)],
    ]);
    const revokedEvents = (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[]).filter(
      (e) => e.certificateId === created.id && e.type === "certificate.revoked",
    );
    expect(revokedEvents.length).toBe(1);
    expect(responder.requests.length - before).toBe(2);
  });
});
