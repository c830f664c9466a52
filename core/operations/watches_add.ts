/** POST /v1/watches: validate in CONTRACT §4's order, check nothing blocks it, store, answer. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { normalizeDomain } from "../certificates/domain_name.ts";
import { rejectUnknownFields, validate } from "../schemas/validate.ts";
import { AddWatchBody, Watch } from "../schemas/watch.ts";
import { Envelope } from "../schemas/common.ts";
import type { WatchRecord } from "../base/records.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { presentWatch } from "./_watches.ts";
import { limitMessage } from "../certificates/add_rules.ts";

interface AddWatchInput {
  domain: string;
  includeSubdomains: boolean;
  autoMonitor: boolean;
  allowedIssuers: string[];
}

/** Unknown fields, then the domain (CONTRACT §5's rules), then the rest. */
function parseAddWatch(raw: unknown): AddWatchInput {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new CertkeeperError("invalid_request", 'The request body must be a JSON object such as {"domain": "example.com"}.');
  }
  rejectUnknownFields(AddWatchBody, raw as Record<string, unknown>);
  const domain = normalizeDomain((raw as { domain?: unknown }).domain);
  const body = validate(AddWatchBody, raw);
  return {
    domain,
    includeSubdomains: body.includeSubdomains ?? true,
    autoMonitor: body.autoMonitor ?? false,
    allowedIssuers: body.allowedIssuers ?? [],
  };
}

export const addWatch = defineOperation({
  id: "addWatch",
  embed: "watches.add",
  method: "POST",
  path: "/v1/watches",
  tag: "Watches",
  summary: "Watch a domain in Certificate Transparency",
  description:
    "Every CERTKEEPER_CT_INTERVAL the watch asks the Certificate Transparency search service for certificates issued " +
    "for the domain. The first poll records what exists without events; each later issuance raises certificate.issued.",
  access: "write",
  query: NoQuery,
  body: AddWatchBody,
  parseBody: parseAddWatch,
  status: 201,
  response: Envelope(Watch),
  errors: ["permission_denied", "payload_too_large", "unsupported_media_type", "invalid_domain", "duplicate_watch", "watch_limit_reached"],
  example: { request: { domain: "example.com", includeSubdomains: true, autoMonitor: false, allowedIssuers: ["Let's Encrypt"] } },
  async handle({ principal, services }, { body }) {
    const input = body as AddWatchInput;
    const now = services.clock.now();
    const record: WatchRecord = {
      ...principal.scope,
      id: newId("wch"),
      ...input,
      lastPolledAt: null,
      lastError: null,
      issuancesSeen: 0,
      cursor: null,
      baselineDone: false,
      pendingNames: [],
      nextPollAt: now,
      createdAt: now,
      updatedAt: now,
    };
    const limit = principal.limits.watches;
    const result = await services.store.watches.insert(record, { limit });
    if (result === "duplicate") {
      throw new CertkeeperError("duplicate_watch", `${quote(input.domain)} is already watched: list your watches with GET /v1/watches.`);
    }
    if (result === "limit_reached") {
      const what = limit === 1 ? "watch" : "watches";
      throw new CertkeeperError("watch_limit_reached", limitMessage({ limit, what, flag: "watch-limit", organizationId: principal.scope.organizationId }));
    }
    services.watches?.poke();
    return { data: presentWatch(record) };
  },
});
