/**
 * The event resource, one shape per kind: what `data` holds for each (CONTRACT §7, §13–§15, §18–§22),
 * documented and checked in the OpenAPI document (each shape a component), so that a response that
 * departs from it is caught. A kind's data may gain fields in a later release; none is taken away.
 */
import { Type, type TProperties, type TSchema } from "@sinclair/typebox";
import type { EventType } from "../base/records.ts";
import { Delivery } from "./channel.ts";
import { Deployment } from "./certificate.ts";
import { EventKind } from "./channel_filter.ts";
import { Id, Timestamp } from "./common.ts";

const Window = Type.Object({ start: Timestamp, end: Timestamp });

export const EventEndpoint = Type.Object(
  {
    address: Type.Union([Type.String(), Type.Null()]),
    serialNumber: Type.String(),
    expiresAt: Timestamp,
  },
  { description: "The address whose leaf the event is about, when another than the certificate-level one: that leaf's serial and expiry" },
);

/** Every event about a monitored certificate carries it, frozen when the event happened. */
const certificateFields = {
  // Checked as an object: an event recorded by an earlier release holds the certificate as it showed it.
  certificate: Type.Object({}, { additionalProperties: true, description: "The certificate as GET /v1/certificates/{id} showed it when the event happened" }),
  muted: Type.Optional(Type.Literal(true, { description: "Recorded while the certificate was muted: delivered nowhere" })),
};

const Threshold = Type.Integer({ minimum: 0, description: "The threshold crossed, in days before expiry" });

function data<P extends TProperties>(title: string, properties: P, description: string) {
  return Type.Object({ ...certificateFields, ...properties }, { title, description });
}

export const ExpiringEventData = data("Expiring event data", { threshold: Threshold }, "certificate.expiring: a threshold crossed");

export const RenewedEventData = data(
  "Renewed event data",
  { previous: Type.Object({ serialNumber: Type.String(), expiresAt: Timestamp }, { description: "The leaf replaced" }) },
  "certificate.renewed: every answering address serves a new certificate",
);

export const UnreachableEventData = data("Unreachable event data", { error: Type.String({ description: "Why the check failed" }) }, "certificate.unreachable");

export const ChainExpiringEventData = data(
  "Chain expiring event data",
  {
    threshold: Threshold,
    chainCertificate: Type.Object({ subject: Type.String(), issuer: Type.String(), serialNumber: Type.String(), expiresAt: Timestamp }),
    endpoint: Type.Optional(EventEndpoint),
  },
  "certificate.chain_expiring: a certificate of the chain expires before the leaf",
);

export const RevokedEventData = data("Revoked event data", { endpoint: Type.Optional(EventEndpoint) }, "certificate.revoked");

export const RenewalOverdueEventData = data(
  "Renewal overdue event data",
  {
    deadline: Timestamp,
    source: Type.Union([Type.Literal("ari"), Type.Literal("lifetime")]),
    window: Type.Union([Window, Type.Null()]),
    daysUntilExpiry: Type.Integer({ description: "Of the leaf concerned" }),
    endpoint: Type.Optional(EventEndpoint),
  },
  "certificate.renewal_overdue: the renewal deadline passed and an address still serves the leaf",
);

export const RenewalRequestedEventData = data(
  "Renewal requested event data",
  {
    window: Type.Union([Window, Type.Null()], { description: "The window of the answer that asked; null when only the end it asked by was kept" }),
    explanationUrl: Type.Union([Type.String(), Type.Null()]),
    endpoint: Type.Optional(EventEndpoint),
  },
  "certificate.renewal_requested: the CA asks (ARI) for early replacement",
);

export const NotDeployedEventData = data(
  "Not deployed event data",
  {
    deployment: Deployment,
    lagging: Type.Array(Type.String(), { description: "The addresses still serving an older leaf" }),
  },
  "certificate.not_deployed: a certificate issued for the name is not served by every address after the grace period",
);

export const RenewalBlockedEventData = data(
  "Renewal blocked event data",
  {
    caa: Type.Object({
      name: Type.String(),
      setAt: Type.String(),
      property: Type.Union([Type.Literal("issue"), Type.Literal("issuewild")]),
      reason: Type.Union([Type.Literal("not_listed"), Type.Literal("critical")]),
      records: Type.Array(Type.String()),
      issuerDomain: Type.Union([Type.String(), Type.Null()]),
    }),
  },
  "certificate.renewal_blocked: CAA forbids the issuer's CA to issue the next certificate",
);

export const CertificateEventData = data("Certificate event data", {}, "certificate.expired, certificate.invalid, certificate.recovered");

export const IssuedEventData = Type.Object(
  {
    watchId: Type.String(),
    domain: Type.String(),
    dnsNames: Type.Array(Type.String()),
    issuer: Type.Union([Type.String(), Type.Null()]),
    notBefore: Timestamp,
    notAfter: Timestamp,
    fingerprintSha256: Type.Union([Type.String(), Type.Null()], { description: "Null when only the precertificate was seen" }),
    authorizedIssuer: Type.Union([Type.Boolean(), Type.Null()], { description: "Null when the watch names no allowed issuers" }),
  },
  { title: "Issued event data", description: "certificate.issued: a certificate for a watched domain appeared in Certificate Transparency" },
);

export const TestEventData = Type.Object(
  {
    message: Type.String(),
    channel: Type.Object({ id: Type.String(), name: Type.String(), type: Type.String() }),
  },
  { title: "Test event data", description: "test: sent by POST /v1/channels/{id}/test" },
);

const DATA: Record<EventType, TSchema> = {
  "certificate.expiring": ExpiringEventData,
  "certificate.expired": CertificateEventData,
  "certificate.renewed": RenewedEventData,
  "certificate.invalid": CertificateEventData,
  "certificate.unreachable": UnreachableEventData,
  "certificate.recovered": CertificateEventData,
  "certificate.chain_expiring": ChainExpiringEventData,
  "certificate.revoked": RevokedEventData,
  "certificate.issued": IssuedEventData,
  "certificate.renewal_overdue": RenewalOverdueEventData,
  "certificate.renewal_requested": RenewalRequestedEventData,
  "certificate.not_deployed": NotDeployedEventData,
  "certificate.renewal_blocked": RenewalBlockedEventData,
  test: TestEventData,
};

/**
 * An event as GET /v1/events lists it. Its kind says what its data holds: one shape per kind, checked
 * where the kind is (`allOf` of `if` type, `then` data), while `type` and `data` stay plain properties.
 */
export const Event = Type.Object(
  {
    id: Id("evt", "evt_5tH8qW2kLm9XcV0bN3aZ"),
    type: EventKind,
    createdAt: Timestamp,
    certificateId: Type.Union([Type.String(), Type.Null()]),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description:
        "{ certificate: the certificate as GET showed it then, threshold?, muted? (true: recorded while the certificate was muted, delivered nowhere) } " +
        "(certificate.chain_expiring adds chainCertificate: { subject, issuer, serialNumber, expiresAt }; certificate.chain_expiring and " +
        "certificate.revoked about a leaf another endpoint serves add endpoint: { address, serialNumber, expiresAt }; certificate.renewed adds previous; " +
        "certificate.unreachable adds error (why the check failed); " +
        "certificate.renewal_blocked adds caa: { name, setAt, property, reason, records, issuerDomain }; " +
        "certificate.renewal_overdue adds deadline, source (ari or lifetime), window: { start, end } | null and daysUntilExpiry (of the leaf concerned), and endpoint when the leaf is another endpoint's; " +
        "certificate.renewal_requested adds window: { start, end } and explanationUrl (string or null), and endpoint when the leaf is another endpoint's; " +
        "certificate.not_deployed adds deployment: { issuedAt, fingerprintSha256, notAfter, issuer, seenAt, servedBy, endpoints } and " +
        "lagging: the addresses still serving an older leaf) " +
        "(test events: { message, channel }; certificate.issued: { watchId, domain, dnsNames, issuer, notBefore, notAfter, fingerprintSha256, authorizedIssuer })",
    }),
    deliveries: Type.Array(Delivery),
  },
  {
    additionalProperties: false,
    allOf: Object.entries(DATA).map(([type, data]) => ({ if: { properties: { type: { const: type } } }, then: { properties: { data } } })),
  },
);
