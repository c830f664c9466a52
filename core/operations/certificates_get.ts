/** GET /v1/certificates/{id}: every field of the certificate, status computed now. */
import { Certificate } from "../schemas/certificate.ts";
import { Envelope, IdParams } from "../schemas/common.ts";
import { certificateJson, presentCertificate } from "../certificates/present.ts";
import { defineOperation, NoQuery, renderedResult } from "./operation.ts";
import { findCertificate } from "./_certificates.ts";

export const getCertificate = defineOperation({
  id: "getCertificate",
  embed: "certificates.get",
  method: "GET",
  path: "/v1/certificates/:id",
  tag: "Certificates",
  summary: "Get a certificate",
  access: "read",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Certificate),
  errors: ["certificate_not_found"],
  async handle({ principal, services }, { params }) {
    const record = await findCertificate(services, principal.scope, params.id!);
    const now = services.clock.now();
    return renderedResult(certificateJson(record, now), () => presentCertificate(record, now));
  },
});
