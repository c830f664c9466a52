/** Certificate schemas: request bodies and the resource, written once for validation, types and OpenAPI. */
import { Type, type Static } from "@sinclair/typebox";
import { Id, PageQuery, Timestamp } from "./common.ts";
import { ALERT_POLICIES, CERTIFICATE_STATUSES, PROTOCOLS, RENEWAL_STATES, STATUS_REASONS } from "../base/records.ts";
import { Tags, Tag, MAX_TAGS } from "./tags.ts";

export const CertificateName = Type.String({ minLength: 1, maxLength: 100, description: "Friendly name; default: the domain" });

export const AlertThresholds = Type.Array(Type.Integer({ minimum: 0, maximum: 730 }), {
  maxItems: 10,
  uniqueItems: true,
  description: "Days before expiry at which to alert; default [30, 14, 7, 3, 1]; returned sorted descending",
  examples: [[30, 14, 7, 3, 1]],
});

export const Protocol = Type.Union(
  PROTOCOLS.map((protocol) => Type.Literal(protocol)),
  {
    description:
      "tls: TLS from the first byte (default); otherwise the protocol whose STARTTLS upgrade is spoken first. " +
      "Default port: tls 443, smtp 25, imap 143, pop3 110, ftp 21, postgres 5432, mysql 3306, ldap 389, xmpp 5222",
  },
);

export const ConnectTo = Type.String({
  minLength: 1,
  // 253 characters, and a trailing dot (removed before the name is judged).
  maxLength: 254,
  description:
    "A host name or an IPv4/IPv6 literal to resolve and connect to instead of the domain; SNI and host-name " +
    "verification still use the domain. Null: the domain",
  examples: ["203.0.113.10", "node-4.lb.example.com"],
});

export const AlertPolicy = Type.Union(
  ALERT_POLICIES.map((policy) => Type.Literal(policy)),
  {
    description:
      "renewal: alert when the certificate should have been renewed (its renewal deadline: the end of the CA's ARI " +
      "window, else three quarters of its lifetime, two thirds under 10 days), never for days left before then; " +
      "days: alert at each of alertThresholds. Default on add: the server's CERTKEEPER_ALERT_POLICY (renewal unless set)",
  },
);
export const MailDomain = Type.String({
  minLength: 1,
  // 253 characters, and a trailing dot (removed before the name is judged).
  maxLength: 254,
  description:
    "smtp only: the mail domain whose MTA-STS policy (_mta-sts TXT record, https://mta-sts.<mailDomain>/.well-known/mta-sts.txt) " +
    "must cover this host; lower-cased, punycode. Null: the default, the domain minus its first label",
  examples: ["example.com"],
});

export const AddCertificateBody = Type.Object(
  {
    domain: Type.String({
      description: "Host name to monitor; lower-cased, trailing dot removed, internationalized names as punycode",
      examples: ["example.com"],
    }),
    name: Type.Optional(CertificateName),
    port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535, description: "Default: the protocol's port (443 for tls)", examples: [443] })),
    alertThresholds: Type.Optional(AlertThresholds),
    tags: Type.Optional(Tags),
    protocol: Type.Optional(Protocol),
    connectTo: Type.Optional(Type.Union([ConnectTo, Type.Null()])),
    alertPolicy: Type.Optional(AlertPolicy),
    mailDomain: Type.Optional(Type.Union([MailDomain, Type.Null()])),
  },
  { additionalProperties: false },
);
export type AddCertificateBody = Static<typeof AddCertificateBody>;

export const MutedUntil = Type.Union([Timestamp, Type.Null()], {
  description: "Until then the certificate's events are recorded with data.muted: true and delivered nowhere; null: not muted",
});

export const PatchCertificateBody = Type.Object(
  {
    name: Type.Optional(CertificateName),
    alertThresholds: Type.Optional(AlertThresholds),
    tags: Type.Optional(Tags),
    mutedUntil: Type.Optional(MutedUntil),
    connectTo: Type.Optional(Type.Union([ConnectTo, Type.Null()])),
    alertPolicy: Type.Optional(AlertPolicy),
    mailDomain: Type.Optional(Type.Union([MailDomain, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type PatchCertificateBody = Static<typeof PatchCertificateBody>;

export const CertificateStatus = Type.Union(
  CERTIFICATE_STATUSES.map((status) => Type.Literal(status)),
  { description: "First that applies: expired, revoked, unreachable, invalid, expiring, valid" },
);

export const StatusReason = Type.Union(
  [...STATUS_REASONS.map((reason) => Type.Literal(reason)), Type.Null()],
  { description: "Why the status is not valid; null when valid" },
);

const Fingerprint = Type.String({
  description: "SHA-256 of the certificate's DER, upper-case hex pairs joined by ':'",
  examples: ["3F:A1:0B:…"],
});

export const Revocation = Type.Object(
  {
    status: Type.Union(
      ["good", "revoked", "unknown", "unavailable", "not_checked"].map((status) => Type.Literal(status)),
      {
        description:
          "not_checked: revocation is off, the certificate names neither an OCSP responder nor a CRL, or its chain is not trusted; " +
          "unavailable: every source failed (soft-fail: the status is unchanged)",
      },
    ),
    source: Type.Union([Type.Literal("ocsp_stapled"), Type.Literal("ocsp"), Type.Literal("crl"), Type.Null()]),
    checkedAt: Type.Union([Timestamp, Type.Null()], { description: "When the answer was obtained (cached answers keep their time)" }),
    revokedAt: Type.Union([Timestamp, Type.Null()]),
    reason: Type.Union([Type.String({ examples: ["keyCompromise"] }), Type.Null()], { description: "RFC 5280 CRLReason name" }),
  },
  { additionalProperties: false, description: "Whether the leaf is revoked, as its OCSP responder or CRL says" },
);

export const ChainEntry = Type.Object(
  {
    subject: Type.String(),
    issuer: Type.String(),
    validFrom: Timestamp,
    validTo: Timestamp,
    serialNumber: Type.String({ examples: ["04:A3:1F:9C"] }),
    fingerprintSha256: Fingerprint,
    daysUntilExpiry: Type.Integer({ description: "floor((validTo − now) / 24 h)" }),
  },
  { additionalProperties: false },
);

export const Dane = Type.Object(
  {
    status: Type.Union([Type.Literal("match"), Type.Literal("mismatch"), Type.Literal("none")], {
      description:
        "match: the chain served matches a TLSA record (usage 2 or 3, selector 0 or 1, matching type 0, 1 or 2); " +
        "mismatch: TLSA records exist and none matches; none: no usable TLSA record at _<port>._tcp.<domain>",
    }),
    validated: Type.Boolean({ description: "The resolver's answer carried the DNSSEC AD bit (certkeeper does not validate DNSSEC itself)" }),
  },
  { additionalProperties: false, description: "DANE (RFC 7672) for smtp certificates; null for other protocols, an address that gave no certificate, or before any TLSA answer" },
);

export const Endpoint = Type.Object(
  {
    address: Type.String({ description: "An address the name resolved to", examples: ["203.0.113.10"] }),
    status: CertificateStatus,
    statusReason: StatusReason,
    serialNumber: Type.Union([Type.String(), Type.Null()]),
    fingerprintSha256: Type.Union([Fingerprint, Type.Null()]),
    expiresAt: Type.Union([Timestamp, Type.Null()]),
    lastCheckedAt: Timestamp,
    dane: Type.Union([Dane, Type.Null()]),
  },
  { additionalProperties: false, description: "What one address served at the last check; certificate fields null when it gave none" },
);

export const PublicKey = Type.Object(
  {
    algorithm: Type.String({ description: "RSA, EC, Ed25519 or Ed448", examples: ["EC"] }),
    size: Type.Integer({ description: "Key size in bits", examples: [256] }),
    curve: Type.Union([Type.String({ examples: ["P-256"] }), Type.Null()]),
  },
  { additionalProperties: false, description: "The leaf's public key" },
);

export const TlsConnection = Type.Object(
  {
    protocol: Type.String({ examples: ["TLSv1.3"] }),
    cipher: Type.String({ description: "OpenSSL's name of the cipher suite", examples: ["TLS_AES_128_GCM_SHA256"] }),
  },
  { additionalProperties: false, description: "The connection of the endpoint the certificate-level fields describe" },
);

export const RenewalStateSchema = Type.Union(
  RENEWAL_STATES.map((state) => Type.Literal(state)),
  {
    description:
      "requested: the CA asked (ARI) for this certificate to be replaced early; overdue: the renewal deadline has passed " +
      "and an endpoint still serves it; not_due otherwise. The same under both alert policies",
  },
);

const Window = Type.Object({ start: Timestamp, end: Timestamp }, { additionalProperties: false });

export const Renewal = Type.Object(
  {
    deadline: Timestamp,
    source: Type.Union([Type.Literal("ari"), Type.Literal("lifetime")], {
      description: "ari: the end of the CA's suggested renewal window (RFC 9773); lifetime: three quarters of the lifetime (two thirds under 10 days)",
    }),
    window: Type.Union([Window, Type.Null()], { description: "The CA's suggested renewal window; null with source lifetime" }),
    explanationUrl: Type.Union([Type.String(), Type.Null()], { description: "The CA's explanation of its window, when it gave one" }),
    state: RenewalStateSchema,
    checkedAt: Type.Union([Timestamp, Type.Null()], { description: "When the renewal information used was received; null with source lifetime" }),
  },
  { additionalProperties: false, description: "Renewal of the certificate the certificate-level fields describe" },
);

export const Deployment = Type.Object(
  {
    issuedAt: Timestamp,
    fingerprintSha256: Type.Union([Fingerprint, Type.Null()], { description: "Of the certificate issued; null when only its precertificate was logged" }),
    notAfter: Timestamp,
    issuer: Type.String({ examples: ["Let's Encrypt"] }),
    seenAt: Timestamp,
    servedBy: Type.Integer({ minimum: 0, description: "Answering endpoints that serve it (or a later certificate)" }),
    endpoints: Type.Integer({ minimum: 0, description: "Answering endpoints" }),
  },
  {
    additionalProperties: false,
    description:
      "A certificate a watch saw issued for exactly these names, later than the one served, that not every endpoint serves yet; " +
      "certificate.not_deployed is raised once when 24 hours (or a tenth of its lifetime, when shorter) pass from seenAt while one still serves an older one",
  },
);

export const WARNINGS = ["weak_key", "weak_signature", "legacy_protocol", "caa_forbids_issuer", "dane_mismatch", "mta_sts_mismatch"] as const;

const certificateFields = {
  id: Id("cert", "cert_3kT9vQm2Xy7LpA0bN5cZ"),
  domain: Type.String({ examples: ["example.com"] }),
  name: Type.String(),
  status: CertificateStatus,
  daysUntilExpiry: Type.Integer({ description: "floor((expiresAt − now) / 24 h); negative once expired" }),
  expiresAt: Timestamp,
  issuedAt: Timestamp,
  issuer: Type.String({ examples: ["Let's Encrypt"] }),
  subject: Type.String({ examples: ["example.com"] }),
  subjectAlternativeNames: Type.Array(Type.String(), { examples: [["example.com", "www.example.com"]] }),
  serialNumber: Type.String({ examples: ["04:A3:1F:9C"] }),
  signatureAlgorithm: Type.String({ examples: ["sha256WithRSAEncryption"] }),
  port: Type.Integer(),
  alertThresholds: Type.Array(Type.Integer()),
  lastCheckedAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  chain: Type.Array(ChainEntry, { description: "The certificates the server sent, leaf first" }),
  statusReason: StatusReason,
  revocation: Revocation,
  tags: Type.Array(Type.String(), { description: "Sorted", examples: [["env:prod", "team:payments"]] }),
  mutedUntil: Type.Union([Timestamp, Type.Null()], { description: "Until then its events are delivered nowhere; null: not muted" }),
  protocol: Protocol,
  connectTo: Type.Union([Type.String(), Type.Null()], { description: "Where to connect instead of the domain; null: the domain" }),
  mailDomain: Type.Union([Type.String(), Type.Null()], {
    description: "smtp: the mail domain whose MTA-STS policy is judged (given, or the domain minus its first label); null for other protocols",
  }),
  endpoints: Type.Array(Endpoint, { description: "One entry per address, IPv4 first then IPv6, each in ascending numeric order" }),
  chainExpiresAt: Type.Union([Timestamp, Type.Null()], {
    description: "Earliest notAfter above the leaf on the trusted path (intermediates and the anchoring root); null without a trusted path",
  }),
  publicKey: Type.Union([PublicKey, Type.Null()]),
  tls: Type.Union([TlsConnection, Type.Null()]),
  warnings: Type.Array(Type.Union(WARNINGS.map((warning) => Type.Literal(warning))), {
    description:
      "weak_key (RSA < 2048 bits, EC < 256), weak_signature (SHA-1 or MD5 below a root), legacy_protocol (TLS 1.1 or older), " +
      "caa_forbids_issuer (the CAA records do not let the issuer's CA issue the next certificate), dane_mismatch (an smtp endpoint's " +
      "chain matches none of its TLSA records), mta_sts_mismatch (an enforce MTA-STS policy does not cover the host or its certificate); never change status",
  }),
  alertPolicy: AlertPolicy,
  renewal: Type.Union([Renewal, Type.Null()], { description: "Null only while no certificate was ever retrieved (the CLI's check of an unreachable target)" }),
  deployment: Type.Union([Deployment, Type.Null()], { description: "Null unless an issuance is waiting to be served by every endpoint" }),
};

export const Certificate = Type.Object(certificateFields, { additionalProperties: false });
export type CertificateView = Static<typeof Certificate>;

/** The add operation's response: exactly the 13 fields SPEC.md 2.2 lists for it, in its order. */
export const CREATED_FIELDS = [
  "id",
  "domain",
  "name",
  "status",
  "daysUntilExpiry",
  "expiresAt",
  "issuedAt",
  "issuer",
  "subject",
  "port",
  "alertThresholds",
  "createdAt",
  "updatedAt",
] as const;
export const CreatedCertificate = Type.Pick(Certificate, CREATED_FIELDS, { additionalProperties: false });
export type CreatedCertificateView = Static<typeof CreatedCertificate>;

/** The CLI's `check`: the get view without what only a monitored certificate has (CONTRACT §2). */
export const UNMONITORED_FIELDS = ["id", "createdAt", "updatedAt", "alertThresholds", "name", "tags", "mutedUntil"] as const;
export const CheckedCertificate = Type.Omit(Certificate, UNMONITORED_FIELDS, { additionalProperties: false });
export type CheckedCertificateView = Static<typeof CheckedCertificate>;

export const ListCertificatesQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(
      Type.Array(CertificateStatus, {
        minItems: 1,
        description: "One status or a comma-separated list of them: `status=expiring,expired`",
        examples: [["expiring", "expired"]],
      }),
    ),
    domain: Type.Optional(Type.String({ description: "Case-insensitive substring of the domain" })),
    tag: Type.Optional(
      Type.Array(Tag, {
        minItems: 1,
        maxItems: MAX_TAGS,
        description: "One tag or a comma-separated list of them: the certificates carrying every one, `tag=team:payments,env:prod`",
        examples: [["team:payments", "env:prod"]],
      }),
    ),
    renewal: Type.Optional(
      Type.Array(RenewalStateSchema, {
        minItems: 1,
        description: "One renewal state or a comma-separated list of them: `renewal=overdue,requested`",
        examples: [["overdue", "requested"]],
      }),
    ),
  },
  { additionalProperties: false },
);

/** The weeks GET /v1/certificates/summary counts expiries in. */
export const SUMMARY_WEEKS = 12;

export const CertificateSummary = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: "Certificates monitored in this mode" }),
    byStatus: Type.Object(
      Object.fromEntries(CERTIFICATE_STATUSES.map((status) => [status, Type.Integer({ minimum: 0 })])),
      { additionalProperties: false, description: "How many certificates have each status now" },
    ),
    byRenewal: Type.Object(
      Object.fromEntries(RENEWAL_STATES.map((state) => [state, Type.Integer({ minimum: 0 })])),
      { additionalProperties: false, description: "How many certificates are in each renewal state now (overdue: renewal overdue)" },
    ),
    expiringPerWeek: Type.Array(
      Type.Object(
        { from: Timestamp, until: Timestamp, count: Type.Integer({ minimum: 0 }) },
        { additionalProperties: false },
      ),
      {
        minItems: SUMMARY_WEEKS,
        maxItems: SUMMARY_WEEKS,
        description: "How many certificates expire in each of the next 12 weeks, from now: `from` inclusive, `until` exclusive",
      },
    ),
  },
  { additionalProperties: false },
);
export type CertificateSummaryView = Static<typeof CertificateSummary>;
