/** Realistic certificate records for benchmarks, without a TLS server: a three-certificate chain. */
import type { CertificateRecord, Scope } from "../../core/base/records.ts";
import { DAY } from "../../core/base/time.ts";

const FINGERPRINT = "3F:A1:0B:77:C2:19:8E:5D:44:90:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45:67:89:AB:CD:EF:01:23:45";

export function sampleCertificate(scope: Scope, n: number, now = Date.now()): CertificateRecord {
  const domain = `site-${n}.bench.example`;
  const notBefore = now - 30 * DAY;
  const notAfter = now + (20 + (n % 300)) * DAY;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    ...scope,
    id: `cert_bench${String(n).padStart(16, "0")}`,
    domain,
    port: 443,
    name: domain,
    alertThresholds: [30, 14, 7, 3, 1],
    alertPolicy: "renewal",
    deployment: null,
    tags: [`team:${n % 50}`, ...(n % 1000 === 0 ? ["rare"] : [])].sort(),
    mutedUntil: null,
    createdAt: now,
    updatedAt: now,
    fingerprint: `fp${n}`,
    details: {
      serialNumber: "04:A3:1F:9C:55:12:8E:77:01:AB:CD:EF:10:32:54:76",
      notBefore,
      notAfter,
      issuer: "Let's Encrypt",
      subject: domain,
      subjectAlternativeNames: [domain, `www.${domain}`],
      signatureAlgorithm: "ecdsa-with-SHA384",
      chain: [
        { subject: domain, issuer: "E6", validFrom: iso(notBefore), validTo: iso(notAfter), serialNumber: "04:A3:1F:9C:55:12:8E:77:01:AB:CD:EF:10:32:54:76", fingerprintSha256: FINGERPRINT },
        { subject: "E6", issuer: "ISRG Root X2", validFrom: "2024-03-13T00:00:00.000Z", validTo: "2027-03-12T23:59:59.000Z", serialNumber: "B0:57:3E:91:73:97:27:70:DB:B4:87:CB:3A:45:2B:38", fingerprintSha256: FINGERPRINT },
        { subject: "ISRG Root X2", issuer: "ISRG Root X1", validFrom: "2020-09-04T00:00:00.000Z", validTo: "2025-09-15T16:00:00.000Z", serialNumber: "41:D2:9D:D1:72:EA:EE:A7:80:C1:2C:6C:E9:2F:87:52", fingerprintSha256: FINGERPRINT },
      ],
      fingerprintSha256: FINGERPRINT,
      publicKey: { algorithm: "EC", size: 256, curve: "P-256" },
      warnings: [],
      chainExpiry: { subject: "ISRG Root X1", issuer: "ISRG Root X1", serialNumber: "82:10:CF:B0:D2:40:E3:59:44:63:E0:BB:63:82:8B:00", notAfter: Date.parse("2035-06-04T11:04:38.000Z") },
    },
    protocol: "tls",
    connectTo: null,
    tls: { protocol: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256" },
    endpoints: [],
    alertMemory: { leaves: [], chain: [] },
    problem: null,
    lastCheckedAt: now,
    failure: null,
    failureCount: 0,
    alertedThreshold: null,
    expiryAlerted: false,
    health: "ok",
    nextCheckAt: now + 365 * DAY,
    version: 0,
  };
}
