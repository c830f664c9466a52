/**
 * The dashboard's view of an organization's certificates and channels, as the signed-in user: every
 * read and write goes through the API's own operations (validation, errors, plan limits, the TLS
 * retrieval), with a principal made for the user in the chosen mode, and with the API's rule that
 * members only read. Like a key's requests, each of the user's dashboard actions (a page, an add, a
 * removal) counts against the organization's requests per minute, under the principal's key id
 * `session:<userId>`; over it, 429 `rate_limit_exceeded` with Retry-After.
 */
import { CertkeeperError } from "../base/errors.ts";
import type { Api } from "../http/api.ts";
import type { Principal } from "../auth/authenticate.ts";
import { rateLimitHeaders, type RateLimiter } from "../auth/rate_limit.ts";
import type { Clock } from "../base/time.ts";
import type { Mode, OrganizationRecord, UserRecord } from "../base/records.ts";
import type { Operation, OperationInput, OperationResult } from "../operations/_operation.ts";
import { addCertificate } from "../operations/certificates_add.ts";
import { deleteCertificate } from "../operations/certificates_delete.ts";
import { listCertificates } from "../operations/certificates_list.ts";
import { listChannels } from "../operations/channels_read.ts";
import type { CertificateView, CreatedCertificateView } from "../schemas/certificate.ts";
import type { ChannelView } from "../schemas/channel.ts";
import { mayWrite } from "./roles.ts";

/** Who acts: a signed-in user and their organization. */
export interface Actor {
  user: UserRecord;
  organization: OrganizationRecord;
}

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

/** The principal a signed-in user acts as: like a key of theirs in `mode`. */
export function principalOf(actor: Actor, mode: Mode): Principal {
  return {
    keyId: `session:${actor.user.id}`,
    userId: actor.user.id,
    role: actor.user.role,
    scope: { organizationId: actor.organization.id, mode },
    limits: actor.organization.limits,
  };
}

/** One user's view of one mode's data. */
export interface ActingWorkspace {
  /**
   * Runs an API operation as the user; a member's write is refused as a member key's would be. Each
   * call of this and of the methods below counts once against the rate limit.
   */
  invoke(operation: Operation, input?: Partial<OperationInput>): Promise<OperationResult>;
  overview(): Promise<Overview>;
  addCertificate(form: CertificateForm): Promise<CreatedCertificateView>;
  removeCertificate(id: string): Promise<void>;
}

export class Workspace {
  constructor(
    private readonly api: Api,
    private readonly limits: { rateLimiter: RateLimiter; clock: Clock },
  ) {}

  /** The workspace of `actor` in `mode` (what their `mode` keys would see). */
  as(actor: Actor, mode: Mode): ActingWorkspace {
    const api = this.api;
    const { rateLimiter, clock } = this.limits;
    const principal = principalOf(actor, mode);
    /** Counts one action, as the API counts one request; refused past the organization's requests per minute. */
    const admit = async () => {
      const now = clock.now();
      const limit = await rateLimiter.hit(principal.keyId, principal.limits.requestsPerMinute, now);
      if (limit.allowed) return;
      const headers = rateLimitHeaders(limit, now);
      throw new CertkeeperError(
        "rate_limit_exceeded",
        `Too many requests: your organization allows ${limit.limit} per minute for each user and key. ` +
          `Wait ${headers["retry-after"]} seconds, then try again.`,
        { headers },
      );
    };
    const run = async (operation: Operation, input: Partial<OperationInput> = {}) => {
      if (operation.access === "write" && !mayWrite(actor.user.role)) {
        throw new CertkeeperError("permission_denied", "Members may only look: ask an owner or admin to make changes.");
      }
      return api.invoke(operation, principal, input);
    };
    const invoke = async (operation: Operation, input: Partial<OperationInput> = {}) => {
      await admit();
      return run(operation, input);
    };
    return {
      invoke,
      async overview() {
        await admit();
        const certificates: CertificateView[] = [];
        let cursor: string | null | undefined;
        let pages = 0;
        do {
          const query: Record<string, string> = { limit: String(PAGE) };
          if (cursor) query.cursor = cursor;
          const result = await run(listCertificates, { query });
          certificates.push(...(result.data as CertificateView[]));
          cursor = result.nextCursor;
        } while (cursor && ++pages < MAX_PAGES);
        const channels = await run(listChannels, { query: { limit: String(PAGE) } });
        return { certificates, channels: channels.data as ChannelView[], truncated: Boolean(cursor) || channels.nextCursor != null };
      },
      async addCertificate(form) {
        const body: Record<string, unknown> = { domain: form.domain ?? "" };
        const port = form.port?.trim();
        // Digits become a number; anything else goes as typed, for the API's validation to name.
        if (port) body.port = /^\d{1,6}$/.test(port) ? Number(port) : port;
        if (form.name?.trim()) body.name = form.name.trim();
        return (await invoke(addCertificate, { body })).data as CreatedCertificateView;
      },
      async removeCertificate(id) {
        await invoke(deleteCertificate, { params: { id } });
      },
    };
  }
}
