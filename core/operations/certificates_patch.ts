/** PATCH /v1/certificates/{id}: change the name, the alert thresholds or policy, tags, mute, connectTo. */
import { Certificate, PatchCertificateBody } from "../schemas/certificate.ts";
import { Envelope, IdParams } from "../schemas/common.ts";
import { presentCertificate } from "../certificates/present.ts";
import { logStatusChange } from "../certificates/status_change_log.ts";
import { validate } from "../schemas/validate.ts";
import { isId } from "../base/ids.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { certificateNotFound } from "./_certificates.ts";
import { sortThresholds } from "../certificates/add_rules.ts";
import { sortTags } from "../schemas/tags.ts";
import { normalizeConnectTo, normalizeMailDomain } from "../certificates/domain_name.ts";
import { mailDomainNotSmtp } from "../certificates/add_rules.ts";
import { CertkeeperError, quote } from "../base/errors.ts";

export const patchCertificate = defineOperation({
  id: "patchCertificate",
  embed: "certificates.update",
  method: "PATCH",
  path: "/v1/certificates/:id",
  tag: "Certificates",
  summary: "Change a certificate's name, alert thresholds or policy, tags, mute, connectTo or mailDomain",
  description:
    "Thresholds the certificate has already passed are not announced again; a threshold added below the " +
    "days left is announced at the next check. A new alertPolicy applies from the next check, made at once: " +
    "to days, the lowest crossed threshold not yet announced for the served certificate is announced then; to " +
    "renewal, nothing is announced before the renewal deadline. Until mutedUntil, the certificate's events are " +
    "recorded with data.muted: true and delivered nowhere. A new connectTo, or an smtp certificate's new mailDomain " +
    "(null: the default), is stored and checked at once.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  body: PatchCertificateBody,
  parseBody: (raw) => {
    // Not a field PATCH takes (CONTRACT §12): say why, rather than that it is unknown.
    if (typeof raw === "object" && raw !== null && !Array.isArray(raw) && Object.hasOwn(raw, "protocol")) {
      throw new CertkeeperError(
        "invalid_request",
        'Field "protocol" cannot be changed by PATCH: delete the certificate and add it again with the new protocol.',
      );
    }
    return validate(PatchCertificateBody, raw);
  },
  status: 200,
  response: Envelope(Certificate),
  errors: ["permission_denied", "payload_too_large", "unsupported_media_type", "certificate_not_found", "duplicate_domain"],
  example: { request: { name: "Shop", alertThresholds: [21, 7, 1], alertPolicy: "renewal", tags: ["team:payments"], mutedUntil: "2026-12-01T06:00:00.000Z" } },
  async handle({ principal, services }, { params, body }) {
    const patch = validate(PatchCertificateBody, body);
    const connectTo = "connectTo" in patch ? normalizeConnectTo(patch.connectTo) : undefined;
    const mailDomain = "mailDomain" in patch ? normalizeMailDomain(patch.mailDomain) : undefined;
    const now = services.clock.now();
    const id = params.id!;
    // Read first when the patch may change what the record is, or what status the rule gives it.
    const judged = patch.alertThresholds !== undefined || patch.alertPolicy !== undefined;
    const before = (connectTo !== undefined || mailDomain !== undefined || judged) && isId("cert", id) ? await services.store.certificates.get(principal.scope, id) : null;
    if (before && mailDomain !== undefined && mailDomain !== null && before.protocol !== "smtp") throw mailDomainNotSmtp(before.protocol);
    const newMailDomain = mailDomain !== undefined && before !== null && mailDomain !== (before.mailDomain ?? null);
    const record = isId("cert", id)
      ? await services.store.certificates.updateSettings(principal.scope, id, {
          name: patch.name,
          alertThresholds: patch.alertThresholds && sortThresholds(patch.alertThresholds),
          tags: patch.tags && sortTags(patch.tags),
          mutedUntil: patch.mutedUntil === undefined ? undefined : patch.mutedUntil === null ? null : Date.parse(patch.mutedUntil),
          connectTo: connectTo === undefined || connectTo === before?.connectTo ? undefined : connectTo,
          alertPolicy: patch.alertPolicy,
          mailDomain: newMailDomain ? mailDomain : undefined,
          updatedAt: now,
        })
      : null;
    if (record === "duplicate") {
      throw new CertkeeperError("duplicate_domain", `Another certificate already watches ${quote(before!.domain)} through ${quote(connectTo ?? before!.domain)}: patch or delete that one.`);
    }
    if (!record) throw certificateNotFound(id);
    // New thresholds or a new policy can change the status at once; the check that follows compares
    // under the new settings, so this is the one line that tells it. The stored record under the old
    // settings against it under the new: a check saved meanwhile is the check's own line, not this one.
    if (before && judged) {
      logStatusChange(services.logger, { ...record, alertThresholds: before.alertThresholds, alertPolicy: before.alertPolicy }, record);
    }
    if ((connectTo !== undefined && connectTo !== before?.connectTo) || newMailDomain) {
      // Another server or policy to watch: check it now, so the answer shows what it serves.
      const checked = await services.monitor.check(record, { manual: true });
      return { data: presentCertificate(checked?.record ?? record, services.clock.now()) };
    }
    // A threshold added below the days left must fire at its crossing, not at the next interval; a new
    // alert policy applies from the check it made due now.
    if (patch.alertThresholds || patch.alertPolicy) services.scheduler.poke();
    return { data: presentCertificate(record, now) };
  },
});
