/**
 * The `certificate.not_deployed` message says when the certificate the lagging addresses still serve
 * expires (CONTRACT §20 is about those addresses), not when the certificate-level leaf does: in a move
 * to shorter-lived certificates the new leaf expires first and is the certificate-level one
 * (docs/deployment.md), and the message gave the new certificate's date as the old one's. Found with
 * pebble and lego: a 1-day certificate on two nodes, a 4-minute one installed on one. The event carries
 * the right date in `data.certificate.endpoints[].expiresAt`. An old certificate already expired is
 * said to have expired.
 */
import { describe, expect, test } from "bun:test";
import type { EventRecord } from "../core/base/records.ts";
import type { CertificateView } from "../core/schemas/certificate.ts";
import { describeEvent } from "../core/notify/_describe.ts";

const NEW_EXPIRES = "2026-11-29T20:03:19.000Z";
const OLD_EXPIRES = "2026-11-30T19:58:52.000Z";

function certificate(): CertificateView {
  return {
    id: "cert_2buyDpAC2Nv7Hlhcrkdr",
    domain: "app4.rr.test",
    name: "app4.rr.test",
    status: "valid",
    daysUntilExpiry: 0,
    // The certificate-level fields describe the leaf that expires first: the new 4-minute one.
    expiresAt: NEW_EXPIRES,
    issuedAt: "2026-11-29T19:59:20.000Z",
    issuer: "Pebble Intermediate CA 1d3467",
    subject: "app4.rr.test",
    subjectAlternativeNames: ["app4.rr.test"],
    serialNumber: "68:FB:DA:8B:1D:80:2E:56",
    signatureAlgorithm: "sha256WithRSAEncryption",
    port: 19444,
    alertThresholds: [30, 14, 7, 3, 1],
    lastCheckedAt: "2026-11-29T19:59:47.852Z",
    createdAt: "2026-11-29T19:55:27.000Z",
    updatedAt: "2026-11-29T19:59:47.852Z",
    chain: [],
    statusReason: null,
    revocation: { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null },
    tags: [],
    mutedUntil: null,
    protocol: "tls",
    connectTo: null,
    mailDomain: null,
    endpoints: [
      {
        address: "127.0.0.1",
        status: "valid",
        statusReason: null,
        serialNumber: "68:FB:DA:8B:1D:80:2E:56",
        fingerprintSha256: "15:AC:B1:0B:A1:E5:AB:00:8C:EA:E2:A0:13:4C:FA:A1:D9:28:C4:7B:BF:AF:81:62:10:DA:39:8E:84:29:EB:9C",
        expiresAt: NEW_EXPIRES,
        lastCheckedAt: "2026-11-29T19:59:47.852Z",
        dane: null,
      },
      {
        address: "127.0.0.2",
        status: "valid",
        statusReason: null,
        serialNumber: "7D:97:D3:A7:A7:FB:42:96:E0:B5:4F:4F:52:EA:83:27:58:21:47:B7",
        fingerprintSha256: "48:A8:89:AA:A0:47:07:19:5C:66:8F:90:10:B6:F9:55:A6:5A:8E:3D:A8:65:DF:1A:2C:EF:24:79:3F:22:EC:D7",
        expiresAt: OLD_EXPIRES,
        lastCheckedAt: "2026-11-29T19:59:47.852Z",
        dane: null,
      },
    ],
    chainExpiresAt: null,
    publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
    tls: { protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" },
    warnings: [],
    alertPolicy: "renewal",
    renewal: { deadline: "2026-11-29T20:01:59.334Z", source: "lifetime", window: null, explanationUrl: null, state: "not_due", checkedAt: null },
    deployment: {
      issuedAt: "2026-11-29T19:59:20.000Z",
      fingerprintSha256: "15:AC:B1:0B:A1:E5:AB:00:8C:EA:E2:A0:13:4C:FA:A1:D9:28:C4:7B:BF:AF:81:62:10:DA:39:8E:84:29:EB:9C",
      notAfter: NEW_EXPIRES,
      issuer: "Pebble",
      seenAt: "2026-11-29T19:59:23.947Z",
      servedBy: 1,
      endpoints: 2,
    },
  };
}

function notDeployed(): EventRecord {
  const c = certificate();
  return {
    id: "evt_oRKFRonrIJSnABARaRgA",
    organizationId: "org_ASl8UcxI2v7nOPtriu3y",
    mode: "live",
    type: "certificate.not_deployed",
    certificateId: c.id,
    data: { certificate: c, deployment: c.deployment, lagging: ["127.0.0.2"] },
    createdAt: Date.parse("2026-11-29T19:59:47.852Z"),
  };
}

describe("certificate.not_deployed during a move to shorter-lived certificates", () => {
  test("the message gives the expiry of the certificate the lagging address still serves, not the new leaf's", () => {
    const { summary } = describeEvent(notDeployed());
    // The old certificate 127.0.0.2 serves expires on 2026-11-30 19:58 UTC.
    expect(summary).toContain("127.0.0.2 still serves the old one, which expires on 2026-11-30 19:58 UTC");
    expect(summary).not.toContain("old one, which expires on 2026-11-29 20:03 UTC");
  });

  test("when the old certificate has already expired, the message says it expired, not that it 'expires' in the past", () => {
    // Seen live: app2.rr.test served a leaf that expired at 19:51:19 UTC; lego renewed at 20:02:59 and the
    // server was not reloaded; the alert at 20:03:28 read "... but 127.0.0.1 still serves the old one, which
    // expires on 2026-11-29 19:51 UTC."
    const c = certificate();
    const old = "2026-11-29T19:51:19.000Z";
    const view: CertificateView = {
      ...c,
      domain: "app2.rr.test",
      name: "app2.rr.test",
      port: 19442,
      status: "expired",
      statusReason: "expired",
      expiresAt: old,
      daysUntilExpiry: -1,
      endpoints: [{ ...c.endpoints[1]!, address: "127.0.0.1", status: "expired", statusReason: "expired", expiresAt: old }],
      deployment: { ...c.deployment!, issuedAt: "2026-11-29T20:02:59.000Z", notAfter: "2026-11-29T20:06:58.000Z", seenAt: "2026-11-29T20:03:04.100Z", servedBy: 0, endpoints: 1 },
    };
    const { summary } = describeEvent({
      ...notDeployed(),
      data: { certificate: view, deployment: view.deployment, lagging: ["127.0.0.1"] },
      createdAt: Date.parse("2026-11-29T20:03:28.004Z"),
    });
    expect(summary).not.toContain("which expires on 2026-11-29 19:51 UTC");
    expect(summary).toContain("expired on 2026-11-29 19:51 UTC");
  });
});
