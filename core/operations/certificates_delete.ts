/** DELETE /v1/certificates/{id}: stop monitoring, and cancel the certificate's pending notifications. */
import { DeleteResult, Envelope, IdParams } from "../schemas/common.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { certificateNotFound } from "./_certificates.ts";
import { isId } from "../base/ids.ts";

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
    const removed = isId("cert", id) && (await services.store.certificates.remove(principal.scope, id, services.clock.now()));
    if (!removed) throw certificateNotFound(id);
    return { data: { id, deleted: true } };
  },
});
