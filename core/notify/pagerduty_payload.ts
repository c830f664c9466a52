/**
 * PagerDuty's Events API v2 (CONTRACT §16): problems open an alert per certificate and problem
 * (`dedup_key` = certificate id + ":" + problem), their end resolves it; news that opens no incident
 * (a test, a newly issued certificate) is a change event. Limits are PagerDuty's documented ones.
 */
import type { EventRecord, EventType } from "../base/records.ts";
import type { OutgoingHttpRequest } from "./ports.ts";
import { certificateOf, targetOf, type Described } from "./_describe.ts";
import { cut } from "./_text.ts";

export type PagerDutyProblem = "expiring" | "expired" | "invalid" | "unreachable" | "revoked" | "chain_expiring" | "renewal" | "not_deployed";
export type PagerDutySeverity = "critical" | "error" | "warning" | "info";

/** The problem each kind of bad news raises, and how loud it is. */
const TRIGGERS: Partial<Record<EventType, { problem: PagerDutyProblem; severity: PagerDutySeverity }>> = {
  "certificate.expiring": { problem: "expiring", severity: "warning" },
  "certificate.expired": { problem: "expired", severity: "critical" },
  "certificate.invalid": { problem: "invalid", severity: "error" },
  "certificate.unreachable": { problem: "unreachable", severity: "critical" },
  "certificate.revoked": { problem: "revoked", severity: "critical" },
  "certificate.chain_expiring": { problem: "chain_expiring", severity: "warning" },
  "certificate.renewal_overdue": { problem: "renewal", severity: "warning" },
  "certificate.renewal_requested": { problem: "renewal", severity: "warning" },
  "certificate.not_deployed": { problem: "not_deployed", severity: "warning" },
  // A renewal that will fail: `renewal`, shared with the overdue and requested kinds (CONTRACT Part III).
  "certificate.renewal_blocked": { problem: "renewal", severity: "warning" },
};

/** The problems each kind of good news ends. */
const RESOLVES: Partial<Record<EventType, PagerDutyProblem[]>> = {
  // Every endpoint serves the new certificate once the certificate-level leaf is renewed: the
  // deployment that was lagging is done.
  "certificate.renewed": ["expiring", "expired", "revoked", "chain_expiring", "renewal", "not_deployed"],
  "certificate.recovered": ["invalid", "unreachable"],
};

/** The problems an event of `type` ends on PagerDuty (none: it ends none). */
export function problemsResolvedBy(type: EventType): readonly PagerDutyProblem[] {
  return RESOLVES[type] ?? [];
}

/** The kinds of bad news that open `problem` on PagerDuty. */
export function triggersOf(problem: PagerDutyProblem): EventType[] {
  return (Object.keys(TRIGGERS) as EventType[]).filter((type) => TRIGGERS[type]!.problem === problem);
}

/** The kinds of good news that end the problem an event of `type` opens on PagerDuty (none: it opens none). */
export function resolvedBy(type: EventType): EventType[] {
  const problem = TRIGGERS[type]?.problem;
  return problem ? (Object.keys(RESOLVES) as EventType[]).filter((good) => RESOLVES[good]!.includes(problem)) : [];
}

/**
 * What a filter of event kinds leaves unresolved on PagerDuty: for each kind it lets through that opens
 * an incident, the good news that would end it when the filter keeps that out (the incident then stays
 * open for good). Empty when nothing is left open.
 *
 * @example
 * unresolvedByFilter(["certificate.renewal_overdue"]); // [{ opens: "certificate.renewal_overdue", endsWith: ["certificate.renewed"] }]
 */
export function unresolvedByFilter(events: readonly EventType[]): Array<{ opens: EventType; endsWith: EventType[] }> {
  const left: Array<{ opens: EventType; endsWith: EventType[] }> = [];
  for (const kind of events) {
    const endsWith = resolvedBy(kind);
    if (endsWith.length > 0 && !endsWith.some((good) => events.includes(good))) left.push({ opens: kind, endsWith });
  }
  return left;
}

// PagerDuty's documented limits.
export const SUMMARY_MAX = 1024;
export const DEDUP_KEY_MAX = 255;
const SOURCE_MAX = 255;
const CLIENT = "certkeeper";

/**
 * The requests one event makes on PagerDuty, in order: one trigger, one change event, or one resolve
 * per problem the event ends. Resolving an alert that is not open is harmless, so a retry may repeat them.
 *
 * @example
 * pagerdutyRequests(event, described, { baseUrl: "https://events.pagerduty.com", routingKey });
 */
export function pagerdutyRequests(
  event: EventRecord,
  described: Described,
  options: { baseUrl: string; routingKey: string; keepOpen?: readonly PagerDutyProblem[] },
): OutgoingHttpRequest[] {
  const post = (path: string, body: unknown): OutgoingHttpRequest => ({
    url: `${options.baseUrl}${path}`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    operator: true,
  });
  const certificate = certificateOf(event);
  const source = cut(certificate ? targetOf(certificate) : sourceOf(event), SOURCE_MAX);
  const trigger = TRIGGERS[event.type];
  const resolves = RESOLVES[event.type];
  if (certificate && event.certificateId && trigger) {
    return [
      post("/v2/enqueue", {
        routing_key: options.routingKey,
        event_action: "trigger",
        dedup_key: dedupKey(event.certificateId, trigger.problem),
        payload: {
          summary: cut(described.headline, SUMMARY_MAX),
          source,
          severity: trigger.severity,
          timestamp: described.createdAt,
          component: certificate.domain,
          class: event.type,
          custom_details: customDetails(event, described),
        },
        client: CLIENT,
      }),
    ];
  }
  if (event.certificateId && resolves) {
    return resolves.filter((problem) => !options.keepOpen?.includes(problem)).map((problem) =>
      post("/v2/enqueue", { routing_key: options.routingKey, event_action: "resolve", dedup_key: dedupKey(event.certificateId!, problem) }),
    );
  }
  return [
    post("/v2/change/enqueue", {
      routing_key: options.routingKey,
      payload: {
        summary: cut(described.headline, SUMMARY_MAX),
        source,
        timestamp: described.createdAt,
        custom_details: customDetails(event, described),
      },
    }),
  ];
}

export function dedupKey(certificateId: string, problem: PagerDutyProblem): string {
  return `${certificateId}:${problem}`.slice(0, DEDUP_KEY_MAX);
}

/** An event without a certificate names its domain in its data when it has one. */
function sourceOf(event: EventRecord): string {
  const domain = event.data.domain;
  return typeof domain === "string" && domain !== "" ? domain : CLIENT;
}

function customDetails(event: EventRecord, described: Described): Record<string, unknown> {
  const details: Record<string, unknown> = { event_id: event.id, event_type: event.type, summary: described.summary };
  for (const fact of described.facts) details[fact.name] = fact.value;
  return details;
}

