/**
 * Notification tests' world: the real Deliverer over a memory store, the real HTTP and SMTP transports, and real
 * receivers on 127.0.0.1 for every channel type. Events are recorded with the deliveries the real routing
 * rule (routeEvent) gives them, as both stores do.
 */
import { Deliverer } from "../../core/notify/deliverer.ts";
import { silentLogger } from "../../core/base/log.ts";
import type { ChannelRecord, ChannelType, EventRecord, EventType, Scope } from "../../core/base/records.ts";
import { routeEvent } from "../../core/channels/channel_filter.ts";
import { createMemoryStore } from "../../adapters/memory/mod.ts";
import { createHttpTransport } from "../../adapters/notify/http.ts";
import { createSmtpTransport } from "../../adapters/notify/smtp.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import { newId } from "../../core/base/ids.ts";
import { FakeClock } from "./fake_clock.ts";
import { startHttpReceiver, startSmtpReceiver, type HttpReceiver, type SmtpReceiver } from "./receivers.ts";

export const ROUTING_KEY = "R0UTINGKEYR0UTINGKEYR0UTINGKEY12";
export const CREATED = Date.UTC(2026, 4, 5, 9, 0, 0);
export const CERT_ID = "cert_3kT9vQm2Xy7LpA0bN5cZ";
const DAY = 86_400_000;
export const iso = (ms: number) => new Date(ms).toISOString();

export interface World {
  clock: FakeClock;
  scope: Scope;
  http: HttpReceiver;
  smtp: SmtpReceiver;
  channels: Record<string, ChannelRecord>;
  record(type: EventType, data: Record<string, unknown>, options?: { certificateId?: string | null; at?: number }): Promise<EventRecord>;
  deliverAll(): Promise<void>;
  /** Requests the HTTP receiver got on a path prefix. */
  at(prefix: string): ReturnType<HttpReceiver["requests"]["filter"]>;
  deliverer: Deliverer;
  close(): Promise<void>;
}

export async function world(types: ChannelType[] = ["webhook", "slack", "discord", "email", "teams", "telegram", "pagerduty"], filters: Partial<Record<ChannelType, ChannelRecord["filter"]>> = {}): Promise<World> {
  const store = createMemoryStore();
  const clock = new FakeClock(CREATED);
  const http = await startHttpReceiver();
  const smtp = await startSmtpReceiver();
  const org = { id: newId("org"), name: "Acme", plan: "pro", limits: { certificates: 1000, channels: 100, watches: 100, requestsPerMinute: 1000 }, createdAt: CREATED - 30 * DAY } as never;
  await store.organizations.create(org);
  const scope: Scope = { organizationId: (org as { id: string }).id, mode: "live" };
  const configs: Record<string, Record<string, unknown>> = {
    webhook: { url: `${http.url}/webhook`, headers: {} },
    slack: { webhookUrl: `${http.url}/slack` },
    discord: { webhookUrl: `${http.url}/discord` },
    teams: { webhookUrl: `${http.url}/teams` },
    email: { email: "oncall@acme.test" },
    telegram: { botToken: "123:abc", chatId: 42 },
    pagerduty: { routingKey: ROUTING_KEY },
  };
  const channels: Record<string, ChannelRecord> = {};
  for (const type of types) {
    const channel = {
      ...scope, id: newId("ch"), type, name: type, enabled: true, config: configs[type], signingSecret: type === "webhook" ? "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" : null,
      filter: filters[type] ?? null, createdAt: CREATED - DAY, updatedAt: CREATED - DAY,
    } as ChannelRecord;
    await store.channels.insert(channel, { limit: 100 });
    channels[type] = channel;
  }
  const httpTransport = createHttpTransport({ trust: TrustStore.system(), resolve: [], allowPrivateTargets: true, connectTimeoutMs: 2000 });
  const email = createSmtpTransport({ url: smtp.url, trust: TrustStore.system(), timeoutMs: 5000 });
  const deliverer = new Deliverer({
    store, clock, logger: silentLogger, transports: { http: httpTransport, email } as never, retryMs: [60_000, 60_000, 60_000], mailFrom: "certkeeper@acme.test",
    pagerdutyUrl: `${http.url}/pd`, telegramUrl: `${http.url}/tg`, owner: "proc_notify", concurrency: 1, perOrganization: 1, timeoutMs: 5000, pollMs: 1000, random: () => 0.5,
  });
  let seq = 0;
  return {
    clock, scope, http, smtp, channels, deliverer,
    async record(type, data, options = {}) {
      const event: EventRecord = {
        ...scope, id: `evt_${String(++seq).padStart(4, "0")}${newId("evt").slice(4)}`, type,
        certificateId: options.certificateId === undefined ? CERT_ID : options.certificateId, data, createdAt: options.at ?? clock.now(),
      };
      const routed = routeEvent(event, Object.values(channels));
      await store.events.insert(event, routed.map((c) => ({ eventId: event.id, channelId: c.id, status: "pending" as const, attempts: 0, nextAttemptAt: event.createdAt, lastError: null, updatedAt: event.createdAt })));
      return event;
    },
    async deliverAll() {
      for (let i = 0; i < 50; i++) {
        const n = await deliverer.loop.runDue();
        if (!n) break;
      }
    },
    at: (prefix) => http.requests.filter((r) => r.path.startsWith(prefix)),
    async close() {
      await httpTransport.close();
      await (email as { close?: () => Promise<void> }).close?.();
      await http.close();
      await smtp.close();
    },
  };
}

/** The certificate as an event carries it (GET's shape), with two endpoints. */
export function certificate(overrides: Record<string, unknown> = {}) {
  return {
    id: CERT_ID, domain: "shop.example.com", name: "Shop", port: 443, status: "expiring", statusReason: "renewal_overdue",
    daysUntilExpiry: 10, expiresAt: "2026-05-15T09:00:00.000Z", issuedAt: "2026-02-14T09:00:00.000Z",
    issuer: "Let's Encrypt", subject: "shop.example.com", subjectAlternativeNames: ["shop.example.com"], serialNumber: "04:A1:B2",
    signatureAlgorithm: "ecdsa-with-SHA256", alertThresholds: [30, 14, 7, 3, 1], chain: [], tags: ["team:web"], mutedUntil: null, alertPolicy: "renewal",
    endpoints: [
      { address: "127.0.0.1", status: "expiring", statusReason: "renewal_overdue", serialNumber: "04:A1:B2", fingerprintSha256: "AA:BB", expiresAt: "2026-05-15T09:00:00.000Z", lastCheckedAt: iso(CREATED) },
      { address: "127.0.0.2", status: "valid", statusReason: null, serialNumber: "05:C3:D4", fingerprintSha256: "CC:DD", expiresAt: "2026-08-01T09:00:00.000Z", lastCheckedAt: iso(CREATED) },
    ],
    renewal: { deadline: "2026-05-04T09:00:00.000Z", source: "ari", window: { start: "2026-05-02T09:00:00.000Z", end: "2026-05-04T09:00:00.000Z" }, explanationUrl: null, state: "overdue", checkedAt: iso(CREATED - 3_600_000) },
    deployment: null,
    ...overrides,
  };
}

/** Every human-facing text a delivery carried, by channel type. */
export function humanTexts(w: World): Record<string, string[]> {
  const out: Record<string, string[]> = { slack: [], discord: [], teams: [], telegram: [], pagerduty: [], email: [] };
  for (const r of w.at("/slack")) out.slack!.push(strings(r.json));
  for (const r of w.at("/discord")) out.discord!.push(strings(r.json));
  for (const r of w.at("/teams")) out.teams!.push(strings(r.json));
  for (const r of w.at("/tg")) out.telegram!.push(r.json.text);
  for (const r of w.at("/pd")) out.pagerduty!.push(strings(r.json.payload ?? r.json));
  for (const m of w.smtp.messages) out.email!.push(`${m.subject}\n${m.text}\n${m.html}`);
  return out;
}

/** Every string value of a JSON document (what a service shows), one per line. */
export function strings(value: unknown): string {
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map(strings).join("\n");
  if (typeof value === "object" && value !== null) return Object.values(value).map(strings).join("\n");
  return "";
}

/** One event of each Part III kind (and certificate.issued), data as the checker records it. */
export function events() {
  return {
    overdue: ["certificate.renewal_overdue", { certificate: certificate(), deadline: "2026-05-04T09:00:00.000Z", source: "ari", window: { start: "2026-05-02T09:00:00.000Z", end: "2026-05-04T09:00:00.000Z" }, daysUntilExpiry: 10 }],
    overdueEndpoint: ["certificate.renewal_overdue", { certificate: certificate(), deadline: "2026-05-01T09:00:00.000Z", source: "lifetime", window: null, daysUntilExpiry: 88, endpoint: { address: "127.0.0.2", serialNumber: "05:C3:D4", expiresAt: "2026-08-01T09:00:00.000Z" } }],
    requested: ["certificate.renewal_requested", { certificate: certificate({ statusReason: "renewal_requested" }), window: { start: "2026-05-05T00:00:00.000Z", end: "2026-05-06T00:00:00.000Z" }, explanationUrl: "https://letsencrypt.org/2026/05/05/incident" }],
    notDeployed: ["certificate.not_deployed", { certificate: certificate({ status: "valid", statusReason: null }), deployment: { issuedAt: "2026-05-03T09:00:00.000Z", fingerprintSha256: "EE:FF", notAfter: "2026-06-17T09:00:00.000Z", issuer: "Let's Encrypt", seenAt: "2026-05-03T10:00:00.000Z", servedBy: 1, endpoints: 2 }, lagging: ["127.0.0.2"] }],
    blocked: ["certificate.renewal_blocked", { certificate: certificate({ status: "valid", statusReason: null }), caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "not_listed", records: ['0 issue "digicert.com"'], issuerDomain: "letsencrypt.org" } }],
    issued: ["certificate.issued", { watchId: "wat_a1B2c3D4e5F6g7H8", domain: "example.com", dnsNames: ["shop.example.com"], issuer: "Let's Encrypt", notBefore: "2026-05-05T08:00:00.000Z", notAfter: "2026-06-19T08:00:00.000Z", fingerprintSha256: "11:22", authorizedIssuer: true }],
  } as const;
}
