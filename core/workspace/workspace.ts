/**
 * The dashboard's view of an organization's certificates and channels, as the signed-in user: every
 * read and write goes through the API's own operations (validation, errors, plan limits, the TLS
 * retrieval), with a principal made for the user in the chosen mode, and with the API's rule that
 * members only read. Like a key's requests, each of the user's dashboard actions (a page, an add, a
 * removal) counts against the organization's requests per minute, under the principal's key id
 * `session:<userId>`; over it, 429 `rate_limit_exceeded` with Retry-After.
 */
import type { Mode } from "../base/records.ts";
import { authorize } from "../auth/permission.ts";
import { callOperation, type Actor, type Call } from "../pipeline/pipeline.ts";
import type { Services } from "../operations/services.ts";
import type { Operation, OperationInput, OperationResult } from "../operations/operation.ts";
import { addCertificate } from "../operations/certificates_add.ts";
import { deleteCertificate } from "../operations/certificates_delete.ts";
import { getCertificate } from "../operations/certificates_get.ts";
import { listCertificates } from "../operations/certificates_list.ts";
import { listChannels } from "../operations/channels_read.ts";
import { summarizeCertificates } from "../operations/certificates_summary.ts";
import { checkCertificate } from "../operations/certificates_check.ts";
import { testChannel } from "../operations/channels_test_event.ts";
import { listEvents } from "../operations/events_list.ts";
import { OPERATIONS } from "../operations/mod.ts";
import { pollWatch } from "../operations/watches_write.ts";
import type { CertificateSummaryView } from "../schemas/certificate.ts";
import type { CertificateView, CreatedCertificateView } from "../schemas/certificate.ts";
import type { ChannelView } from "../schemas/channel.ts";

export type { Actor };

/** What the dashboard shows of one mode. */
export interface Overview {
  /** By expiry, soonest first. */
  certificates: CertificateView[];
  channels: ChannelView[];
  /** True when there were more than the dashboard shows. */
  truncated: boolean;
}

/** The form of the dashboard's "Add certificate": text fields, blank meaning "not given". */
export interface CertificateForm {
  domain?: string;
  port?: string;
  name?: string;
}

const PAGE = 100;
const MAX_PAGES = 10;
/** How far back a certificate's page looks for its events: the organization's newest this many. */
const EVENT_SCAN = 500;

/** The dashboard's filters, as the list operation takes them (strings as typed; the operation validates). */
export interface DashboardQuery {
  domain?: string;
  status?: string;
  tag?: string;
  cursor?: string;
  limit?: number;
}

/** One page of the dashboard: the counts and weeks, and one page of the filtered list. */
export interface DashboardPage {
  summary: CertificateSummaryView;
  certificates: CertificateView[];
  nextCursor: string | null;
}

/** A certificate's page: the certificate and its most recent events. */
export interface CertificateDetail {
  certificate: CertificateView;
  events: Array<{ id: string; type: string; createdAt: string; data: unknown; deliveries: Array<{ channelId: string; status: string; attempts: number; lastError: string | null }> }>;
}

/** Whether the list operation takes a `tag` filter (CONTRACT §16): the dashboard offers it then. */
export const LIST_TAKES_TAGS = "tag" in (listCertificates.query.properties as Record<string, unknown>);

/** One user's view of one mode's data. */
export interface ActingWorkspace {
  /**
   * Runs an API operation as the user; a member's write is refused as a member key's would be. Each
   * call of this and of the methods below counts once against the rate limit.
   */
  invoke(operation: Operation, input?: Partial<OperationInput>): Promise<OperationResult>;
  overview(): Promise<Overview>;
  /** The certificate a removal would remove, for the confirmation page; refused as the removal would be. */
  certificateToRemove(id: string): Promise<CertificateView>;
  addCertificate(form: CertificateForm): Promise<CreatedCertificateView>;
  removeCertificate(id: string): Promise<void>;
  /** Counts, weeks and one page of the list, filtered: one action. */
  dashboard(query: DashboardQuery): Promise<DashboardPage>;
  /** The certificate and its recent events (among the organization's newest 500): one action. */
  certificate(id: string): Promise<CertificateDetail>;
  /** Re-checks the certificate now (a write: members are refused). */
  checkNow(id: string): Promise<CertificateView>;
  /** Every channel of the mode, newest first. */
  channels(): Promise<ChannelView[]>;
  /** Sends a test event to the channel now (a write). */
  testChannel(id: string): Promise<{ eventId: string; channelId: string; status: string; responseStatus: number | null; error: string | null }>;
  /** The CT watches of the mode, when this build has them (CONTRACT §15); null otherwise. */
  watches(): Promise<unknown[] | null>;
  /** Polls the watch now (a write): the watches tab's "Poll now". */
  pollWatch(id: string): Promise<void>;
}

export class Workspace {
  constructor(private readonly services: Services) {}

  /** The workspace of `actor` in `mode` (what their `mode` keys would see). */
  as(actor: Actor, mode: Mode): ActingWorkspace {
    const services = this.services;
    const caller = { kind: "session", actor, mode } as const;
    /** One call through the API's pipeline, as the user. `admitted`: already counted as part of this action. */
    const run = (operation: Operation, input: Partial<OperationInput> = {}, admitted = false) =>
      callOperation(services, { operation, caller, admitted, ...input } satisfies Call);
    return {
      invoke: (operation, input) => run(operation, input),
      async overview() {
        const certificates: CertificateView[] = [];
        let cursor: string | null | undefined;
        let pages = 0;
        do {
          const query: Record<string, unknown> = { limit: PAGE };
          if (cursor) query.cursor = cursor;
          const result = await run(listCertificates, { query }, pages > 0);
          certificates.push(...(result.data as CertificateView[]));
          cursor = result.nextCursor;
        } while (cursor && ++pages < MAX_PAGES);
        const channels = await run(listChannels, { query: { limit: PAGE } }, true);
        return { certificates, channels: channels.data as ChannelView[], truncated: Boolean(cursor) || channels.nextCursor != null };
      },
      async certificateToRemove(id) {
        authorize(actor.user.role, deleteCertificate.access);
        return (await run(getCertificate, { params: { id } })).data as CertificateView;
      },
      async addCertificate(form) {
        const body: Record<string, unknown> = { domain: form.domain ?? "" };
        const port = form.port?.trim();
        // Digits become a number; anything else goes as typed, for the API's validation to name.
        if (port) body.port = /^\d{1,6}$/.test(port) ? Number(port) : port;
        if (form.name?.trim()) body.name = form.name.trim();
        return (await run(addCertificate, { body })).data as CreatedCertificateView;
      },
      async removeCertificate(id) {
        await run(deleteCertificate, { params: { id } });
      },
      async dashboard(filters) {
        const query: Record<string, unknown> = { limit: String(filters.limit ?? 50) };
        if (filters.domain) query.domain = filters.domain;
        if (filters.status) query.status = filters.status;
        if (filters.tag && LIST_TAKES_TAGS) query.tag = filters.tag;
        if (filters.cursor) query.cursor = filters.cursor;
        const list = await run(listCertificates, { query });
        const summary = await run(summarizeCertificates, {}, true);
        return { summary: summary.data as CertificateSummaryView, certificates: list.data as CertificateView[], nextCursor: list.nextCursor ?? null };
      },
      async certificate(id) {
        const certificate = (await run(getCertificate, { params: { id } })).data as CertificateView;
        const events: CertificateDetail["events"] = [];
        let cursor: string | null | undefined;
        let scanned = 0;
        do {
          const query: Record<string, unknown> = { limit: String(PAGE) };
          if (cursor) query.cursor = cursor;
          const page = await run(listEvents, { query }, true);
          const items = page.data as Array<CertificateDetail["events"][number] & { certificateId: string | null }>;
          events.push(...items.filter((event) => event.certificateId === id));
          scanned += items.length;
          cursor = page.nextCursor;
        } while (cursor && scanned < EVENT_SCAN && events.length < 20);
        return { certificate, events: events.slice(0, 20) };
      },
      async checkNow(id) {
        return (await run(checkCertificate, { params: { id } })).data as CertificateView;
      },
      async channels() {
        const channels: ChannelView[] = [];
        let cursor: string | null | undefined;
        let pages = 0;
        do {
          const query: Record<string, unknown> = { limit: String(PAGE) };
          if (cursor) query.cursor = cursor;
          const page = await run(listChannels, { query }, pages > 0);
          channels.push(...(page.data as ChannelView[]));
          cursor = page.nextCursor;
        } while (cursor && ++pages < MAX_PAGES);
        return channels;
      },
      async testChannel(id) {
        return (await run(testChannel, { params: { id } })).data as Awaited<ReturnType<ActingWorkspace["testChannel"]>>;
      },
      async pollWatch(id) {
        await run(pollWatch, { params: { id } });
      },
      async watches() {
        const listWatches = OPERATIONS.find((operation) => operation.id === "listWatches");
        if (!listWatches) return null;
        const watches: unknown[] = [];
        let cursor: string | null | undefined;
        let pages = 0;
        do {
          const query: Record<string, unknown> = { limit: String(PAGE) };
          if (cursor) query.cursor = cursor;
          const page = await run(listWatches, { query }, pages > 0);
          watches.push(...(page.data as unknown[]));
          cursor = page.nextCursor;
        } while (cursor && ++pages < MAX_PAGES);
        return watches;
      },
    };
  }
}
