/** POST /v1/certificates: validate, check nothing blocks it, retrieve the certificate, store, answer. */
import { AddCertificateBody, CreatedCertificate } from "../schemas/certificate.ts";
import { Envelope } from "../schemas/common.ts";
import { presentCreated } from "../certificates/present.ts";
import { duplicate, limitReached, logCertificateAdded, parseAddCertificate, unreachable, type AddCertificateInput } from "../certificates/add_rules.ts";
import { firstCheck } from "../monitor/first_check.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { logEventsRaised } from "../base/journal.ts";

export { parseAddCertificate, sortThresholds, type AddCertificateInput } from "../certificates/add_rules.ts";

export const addCertificate = defineOperation({
  id: "addCertificate",
  embed: "certificates.add",
  method: "POST",
  path: "/v1/certificates",
  tag: "Certificates",
  summary: "Add a certificate to monitor",
  description:
    "Retrieves the certificate from every address of the domain (or of connectTo) at once, speaking the " +
    "protocol's STARTTLS upgrade first when one is given, and starts monitoring it. Nothing is stored when no " +
    "certificate can be retrieved (422 certificate_not_found).",
  access: "write",
  query: NoQuery,
  body: AddCertificateBody,
  parseBody: parseAddCertificate,
  status: 201,
  response: Envelope(CreatedCertificate),
  errors: [
    "permission_denied",
    "payload_too_large",
    "unsupported_media_type",
    "invalid_domain",
    "duplicate_domain",
    "certificate_limit_reached",
    "certificate_unreachable",
  ],
  example: { request: { domain: "example.com", name: "Main site", port: 443, alertThresholds: [30, 14, 7], alertPolicy: "renewal", tags: ["env:prod", "team:web"] } },
  async handle({ principal, services }, { body }) {
    const input = body as AddCertificateInput;
    const { store, clock, monitor, scheduler } = services;
    const scope = principal.scope;
    const limit = principal.limits.certificates;

    // Cheap refusals first, so a duplicate or a full plan costs no TLS connection.
    if (await store.certificates.findByDomain(scope, input)) throw duplicate(input);
    if ((await store.certificates.count(scope)) >= limit) throw limitReached(limit, scope.organizationId);

    const outcome = await monitor.inspect(input, undefined, { organizationId: scope.organizationId });
    if (!outcome.ok) throw unreachable(input, outcome.message);
    const { record, events } = firstCheck(scope, input, outcome, clock.now(), monitor.policy(true));
    const now = record.createdAt;
    const result = await store.certificates.insert(record, { limit, events });
    if (result === "duplicate") throw duplicate(input);
    if (result === "limit_reached") throw limitReached(limit, scope.organizationId);
    scheduler.poke();
    logCertificateAdded(services.logger, record, now);
    logEventsRaised(services.logger, events);
    if (events.length > 0) services.deliveries?.poke();
    return { data: presentCreated(record, now) };
  },
});
