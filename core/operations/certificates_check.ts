/** POST /v1/certificates/{id}/check: re-check now and answer the updated certificate. */
import { Certificate } from "../schemas/certificate.ts";
import { Envelope, IdParams } from "../schemas/common.ts";
import { presentCertificate } from "../certificates/present.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { certificateNotFound, findCertificate } from "./_certificates.ts";

export const checkCertificate = defineOperation({
  id: "checkCertificate",
  embed: "certificates.check",
  method: "POST",
  path: "/v1/certificates/:id/check",
  tag: "Certificates",
  summary: "Re-check a certificate now",
  description:
    "A failed manual check marks the certificate unreachable at once (scheduled checks retry first); the " +
    "last retrieved details stay.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Certificate),
  errors: ["permission_denied", "certificate_not_found"],
  async handle({ principal, services }, { params }) {
    const record = await findCertificate(services, principal.scope, params.id!);
    const checked = await services.monitor.check(record, { manual: true });
    if (!checked) throw certificateNotFound(record.id);
    return { data: presentCertificate(checked.record, services.clock.now()) };
  },
});
