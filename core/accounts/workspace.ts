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
import type { Services } from "../app/services.ts";
import type { Operation, OperationInput, OperationResult } from "../operations/operation.ts";
import { addCertificate } from "../operations/certificates_add.ts";
import { deleteCertificate } from "../operations/certificates_delete.ts";
import { getCertificate } from "../operations/certificates_get.ts";
import { listCertificates } from "../operations/certificates_list.ts";
import { listChannels } from "../operations/channels_read.ts";
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
    };
  }
}
