/** DELETE /v1/certificates/{id}: stop monitoring, and cancel the certificate's pending notifications. */
import { DeleteResult, Envelope, IdParams } from "../schemas/common.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { certificateNotFound, findCertificate } from "./_certificates.ts";

export const deleteCertificate = defineOperation({
  id: "deleteCertificate",
  embed: "certificates.delete",
  method: "DELETE",
  path: "/v1/certificates/:id",
  tag: "Certificates",
  summary: "Remove a certificate from monitoring",
  description: "Deleting also cancels the certificate's pending notifications.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(DeleteResult),
  errors: ["permission_denied", "certificate_not_found"],
  async handle({ principal, services }, { params }) {
    const id = params.id!;
    // Read first, for the log line's name of what was removed (a removal is what an audit asks about).
    const record = await findCertificate(services, principal.scope, id);
    if (!(await services.store.certificates.remove(principal.scope, id, services.clock.now()))) throw certificateNotFound(id);
    services.logger.info("certificate removed", {
      certificateId: id,
      domain: record.domain,
      port: record.port,
      organizationId: record.organizationId,
      mode: record.mode,
    });
    return { data: { id, deleted: true } };
  },
});
