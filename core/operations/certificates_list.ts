/** GET /v1/certificates: the caller's certificates by expiry, filtered, cursor-paginated. */
import { Certificate, ListCertificatesQuery } from "../schemas/certificate.ts";
import { ListEnvelope } from "../schemas/common.ts";
import type { CertificateStatus, RenewalState } from "../base/records.ts";
import { certificateJson, presentCertificate } from "../certificates/present.ts";
import { searchableDomain } from "../certificates/domain_name.ts";
import { defineOperation, renderedResult } from "./operation.ts";
import { listPages, pageLimit } from "./_page.ts";

export const listCertificates = defineOperation({
  id: "listCertificates",
  embed: "certificates.list",
  method: "GET",
  path: "/v1/certificates",
  tag: "Certificates",
  summary: "List certificates",
  description:
    "Ordered by expiresAt ascending, then id. The cursor neither skips nor repeats an item while others are " +
    "added or removed. `tag=a,b` lists the certificates carrying every listed tag; `renewal=overdue,requested` those " +
    "whose renewal state is one of the listed ones.",
  access: "read",
  query: ListCertificatesQuery,
  status: 200,
  response: ListEnvelope(Certificate),
  errors: [],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const pages = listPages("certificates", query, principal.scope);
    const after = pages.position(query.cursor, ["number", "string"]);
    const now = services.clock.now();
    const records = await services.store.certificates.list(principal.scope, {
      limit: limit + 1,
      after: after && { notAfter: after[0] as number, id: after[1] as string },
      statuses: query.status as CertificateStatus[] | undefined,
      // Names are stored in their ASCII form: a name typed in Unicode is searched as that form.
      domainContains: query.domain ? searchableDomain(query.domain as string) || undefined : undefined,
      tags: query.tag as string[] | undefined,
      renewalStates: query.renewal as RenewalState[] | undefined,
      now,
    });
    const { page, nextCursor } = pages.paginate(records, limit, (r) => [r.details.notAfter, r.id]);
    return renderedResult(
      `[${page.map((record) => certificateJson(record, now)).join(",")}]`,
      () => page.map((record) => presentCertificate(record, now)),
      nextCursor,
    );
  },
});
