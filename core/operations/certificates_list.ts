/** GET /v1/certificates: the caller's certificates by expiry, filtered, cursor-paginated. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { Certificate, ListCertificatesQuery } from "../schemas/certificate.ts";
import { ListEnvelope } from "../schemas/common.ts";
import { CERTIFICATE_STATUSES, type CertificateStatus } from "../certificates/status.ts";
import { presentCertificate } from "../certificates/present.ts";
import { defineOperation } from "./_operation.ts";
import { decodeCursor, pageLimit, paginate } from "./_page.ts";

export const listCertificates = defineOperation({
  id: "listCertificates",
  method: "GET",
  path: "/v1/certificates",
  tag: "Certificates",
  summary: "List certificates",
  description:
    "Ordered by expiresAt ascending, then id. The cursor neither skips nor repeats an item while others are " +
    "added or removed.",
  access: "read",
  query: ListCertificatesQuery,
  status: 200,
  response: ListEnvelope(Certificate),
  errors: [],
  async handle({ principal, services }, { query }) {
    const limit = pageLimit(query.limit);
    const after = query.cursor ? decodeCursor(query.cursor, ["number", "string"]) : undefined;
    const now = services.clock.now();
    const records = await services.store.certificates.list(principal.scope, {
      limit: limit + 1,
      after: after && { notAfter: after[0] as number, id: after[1] as string },
      statuses: query.status === undefined ? undefined : parseStatuses(query.status),
      domainContains: query.domain?.toLowerCase() || undefined,
      now,
    });
    const { page, nextCursor } = paginate(records, limit, (r) => [r.details.notAfter, r.id]);
    return { data: page.map((record) => presentCertificate(record, now)), nextCursor };
  },
});

function parseStatuses(text: string): CertificateStatus[] {
  const statuses = text.split(",").map((s) => s.trim());
  for (const status of statuses) {
    if (!(CERTIFICATE_STATUSES as readonly string[]).includes(status)) {
      throw new CertkeeperError(
        "invalid_request",
        `Query parameter "status" has unknown value ${quote(status)}: use ${CERTIFICATE_STATUSES.join(", ")}, or a comma list of them.`,
      );
    }
  }
  return statuses as CertificateStatus[];
}
