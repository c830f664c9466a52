/**
 * GET /v1/certificates/summary: how many of the caller's certificates have each status, and how many
 * expire in each of the next 12 weeks. What the dashboard draws, without listing every certificate.
 */
import { CERTIFICATE_STATUSES, RENEWAL_STATES } from "../base/records.ts";
import { DAY, iso } from "../base/time.ts";
import { CertificateSummary, SUMMARY_WEEKS } from "../schemas/certificate.ts";
import { Envelope } from "../schemas/common.ts";
import { defineOperation, NoQuery } from "./operation.ts";

const WEEK = 7 * DAY;

export const summarizeCertificates = defineOperation({
  id: "summarizeCertificates",
  embed: "certificates.summary",
  method: "GET",
  path: "/v1/certificates/summary",
  tag: "Certificates",
  summary: "Count certificates by status and by week of expiry",
  description:
    "Counts per status (computed now, as GET shows them) and the number of certificates whose expiresAt falls in each " +
    "of the next 12 weeks, starting now. Already expired certificates are in `byStatus.expired`, in no week. " +
    "`byRenewal` counts renewal states (overdue: the renewal is overdue).",
  access: "read",
  query: NoQuery,
  status: 200,
  response: Envelope(CertificateSummary),
  errors: [],
  async handle({ principal, services }) {
    const now = services.clock.now();
    const summary = await services.store.certificates.summarize(principal.scope, { now, from: now, bucketMs: WEEK, buckets: SUMMARY_WEEKS });
    const byStatus = Object.fromEntries(CERTIFICATE_STATUSES.map((status) => [status, summary.byStatus[status] ?? 0]));
    return {
      data: {
        total: Object.values(byStatus).reduce((sum, n) => sum + n, 0),
        byStatus,
        byRenewal: Object.fromEntries(RENEWAL_STATES.map((state) => [state, summary.byRenewal[state] ?? 0])),
        expiringPerWeek: summary.expiring.map((count, week) => ({ from: iso(now + week * WEEK), until: iso(now + (week + 1) * WEEK), count })),
      },
    };
  },
});
