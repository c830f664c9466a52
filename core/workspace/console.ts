/**
 * The settings area as a console (CONTRACT §23): what a signed-in user does in one request, through
 * the API's own operations and pipeline as the user in one mode (the same validation, permissions,
 * plan limits and errors as a key of theirs would get). One {@link ActingConsole} is one action: its
 * first call counts against the organization's requests per minute, the calls after it are part of it.
 *
 * Beside the operations it adds what only a person looking at a screen needs: the dashboard's list
 * with problems first, and whether alerts can go anywhere (an enabled channel) and arrive (no channel
 * failing).
 */
import { CertkeeperError } from "../base/errors.ts";
import type { Mode } from "../base/records.ts";
import { callOperation, type Actor } from "../pipeline/pipeline.ts";
import type { Services } from "../operations/services.ts";
import type { Operation, OperationInput, OperationResult } from "../operations/operation.ts";
import { OPERATIONS } from "../operations/mod.ts";
import { validateQuery } from "../schemas/validate.ts";
import { AddCertificateBody, ListCertificatesQuery, PatchCertificateBody, type CertificateSummaryView, type CertificateView } from "../schemas/certificate.ts";
import type { ChannelView } from "../schemas/channel.ts";
import { PROBLEM_GROUPS } from "../certificates/explain.ts";

/** Whether the list operation filters by renewal state (CONTRACT §18): the dashboard offers it then. */
export const LIST_TAKES_RENEWAL = "renewal" in (ListCertificatesQuery.properties as Record<string, unknown>);

/**
 * Whether this build's certificates take an alert policy (CONTRACT §18) on add and patch: the forms
 * offer the choice then. The one place the settings area learns of it.
 */
export const TAKES_ALERT_POLICY =
  "alertPolicy" in (AddCertificateBody.properties as Record<string, unknown>) && "alertPolicy" in (PatchCertificateBody.properties as Record<string, unknown>);

/** The dashboard's filters, as typed (the list operation's rules judge them). */
export interface ConsoleQuery {
  domain?: string;
  status?: string;
  tag?: string;
  /** Renewal states (CONTRACT §18), where the list operation takes them. */
  renewal?: string;
  cursor?: string;
  /** Certificates per page; default 50. */
  limit?: number;
}

/** Where alerts can go: what the dashboard's banners say. */
export interface AlertRoutes {
  channels: number;
  enabled: number;
  /** Enabled channels whose deliveries fail (failingSince set), longest failing first. */
  failing: ChannelView[];
}

export interface ConsoleDashboard {
  summary: CertificateSummaryView;
  /** Problems first (PROBLEM_GROUPS), soonest expiry first within each, then domain. */
  certificates: CertificateView[];
  nextCursor: string | null;
  alerts: AlertRoutes;
}

export interface ActingConsole {
  /** Runs an API operation (or the one with this id) as the user: the first call of the action is counted. */
  run(operation: Operation | string, input?: Partial<OperationInput>): Promise<OperationResult>;
  dashboard(query: ConsoleQuery): Promise<ConsoleDashboard>;
  /** Every channel of the mode, newest first, health included. */
  channels(): Promise<ChannelView[]>;
  /** Every CT watch of the mode, newest first, when the build has them; null otherwise. */
  watches(): Promise<Array<Record<string, unknown>> | null>;
}

const PAGE = 100;
const MAX_PAGES = 10;
const DASHBOARD_PAGE = 50;

export class Console {
  constructor(private readonly services: Services) {}

  /** One action of `actor` in `mode`. */
  as(actor: Actor, mode: Mode): ActingConsole {
    const services = this.services;
    let calls = 0;
    const run = (operation: Operation | string, input: Partial<OperationInput> = {}) =>
      callOperation(services, { operation: operationOf(operation), caller: { kind: "session", actor, mode }, admitted: calls++ > 0, ...input });
    const all = async <T>(id: string): Promise<T[]> => {
      const items: T[] = [];
      let cursor: string | null | undefined;
      let pages = 0;
      do {
        const page = await run(id, { query: { limit: String(PAGE), ...(cursor ? { cursor } : {}) } });
        items.push(...(page.data as T[]));
        cursor = page.nextCursor;
      } while (cursor && ++pages < MAX_PAGES);
      return items;
    };
    const acting: ActingConsole = {
      run,
      channels: () => all<ChannelView>("listChannels"),
      watches: async () => (OPERATIONS.some((op) => op.id === "listWatches") ? all<Record<string, unknown>>("listWatches") : null),
      async dashboard(query) {
        const summary = (await run("summarizeCertificates")).data as CertificateSummaryView;
        const { certificates, nextCursor } = await problemsFirst(run, query);
        const channels = await acting.channels();
        const enabled = channels.filter((channel) => channel.enabled);
        const failing = enabled
          .filter((channel) => channel.health?.failingSince)
          .sort((a, b) => Date.parse(a.health.failingSince!) - Date.parse(b.health.failingSince!));
        return { summary, certificates, nextCursor, alerts: { channels: channels.length, enabled: enabled.length, failing } };
      },
    };
    return acting;
  }
}

function operationOf(operation: Operation | string): Operation {
  if (typeof operation !== "string") return operation;
  const found = OPERATIONS.find((op) => op.id === operation);
  if (!found) throw new CertkeeperError("not_found", `This server has no ${operation} operation.`);
  return found;
}

type Run = ActingConsole["run"];

/**
 * One page of the certificates, problems first: the groups of PROBLEM_GROUPS in order, each read by
 * the list operation filtered by its statuses and renewal states (and the user's filters), soonest
 * expiry first. The cursor is the group and the list's own cursor within it.
 */
async function problemsFirst(run: Run, query: ConsoleQuery): Promise<{ certificates: CertificateView[]; nextCursor: string | null }> {
  const limit = query.limit ?? DASHBOARD_PAGE;
  const listOperation = operationOf("listCertificates");
  // The user's filters, judged as the list operation judges them (an unknown status, a bad tag).
  const filters = validateQuery(listOperation.query, {
    ...(query.status ? { status: query.status } : {}),
    ...(query.domain ? { domain: query.domain } : {}),
    ...(query.tag ? { tag: query.tag } : {}),
    ...(query.renewal ? { renewal: query.renewal } : {}),
  }) as { status?: string[]; domain?: string; tag?: string[]; renewal?: string[] };
  const [group, inner] = query.cursor ? decodeDashboardCursor(query.cursor) : [0, null as string | null];
  // Each group narrowed by the user's filters (a status or renewal state filtered out leaves it empty).
  const groups = PROBLEM_GROUPS.map((g, index) => ({
    index,
    statuses: g.statuses.filter((status) => !filters.status || filters.status.includes(status)),
    renewal: g.renewal && filters.renewal ? g.renewal.filter((state) => filters.renewal!.includes(state)) : (g.renewal ?? filters.renewal),
  })).filter((g) => g.statuses.length > 0 && (g.renewal === undefined || g.renewal.length > 0));
  const certificates: CertificateView[] = [];
  const list = (group: (typeof groups)[number], size: number, cursor: string | null) =>
    run(listOperation, {
      query: {
        limit: size,
        status: [...group.statuses],
        ...(filters.domain ? { domain: filters.domain } : {}),
        ...(filters.tag ? { tag: filters.tag } : {}),
        ...(group.renewal ? { renewal: [...group.renewal] } : {}),
        ...(cursor ? { cursor } : {}),
      },
    });
  for (const g of groups) {
    if (g.index < group) continue;
    let cursor = g.index === group ? inner : null;
    const found: CertificateView[] = [];
    for (;;) {
      // Never more than still fit: the list's own cursor then resumes exactly after the last one shown.
      const want = Math.min(PAGE, limit - certificates.length - found.length);
      if (want <= 0) break;
      const page = await list(g, want, cursor);
      found.push(...(page.data as CertificateView[]));
      cursor = page.nextCursor ?? null;
      if (!cursor) break;
    }
    certificates.push(...sortGroup(found));
    if (cursor) return { certificates, nextCursor: encodeDashboardCursor(g.index, cursor) };
    if (certificates.length >= limit) {
      // The group is done; whether a later one holds anything decides whether there is a next page.
      for (const later of groups.filter((l) => l.index > g.index)) {
        const first = await list(later, 1, null);
        if ((first.data as CertificateView[]).length > 0) return { certificates, nextCursor: encodeDashboardCursor(later.index, null) };
      }
      return { certificates, nextCursor: null };
    }
  }
  return { certificates, nextCursor: null };
}

/**
 * Within a group, soonest expiry first, then domain (the list gives expiry, then id): only items of
 * equal expiry change places, so the list's cursor still resumes after the last one.
 */
function sortGroup(items: CertificateView[]): CertificateView[] {
  return [...items].sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt) || a.domain.localeCompare(b.domain));
}

function encodeDashboardCursor(group: number, inner: string | null): string {
  return Buffer.from(JSON.stringify([group, inner])).toString("base64url");
}

function decodeDashboardCursor(cursor: string): [number, string | null] {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (Array.isArray(value) && value.length === 2 && Number.isInteger(value[0]) && value[0] >= 0 && (value[1] === null || typeof value[1] === "string")) {
      return [value[0], value[1]];
    }
  } catch {
    // Falls through to the refusal.
  }
  throw new CertkeeperError("invalid_request", 'Query parameter "cursor" is not a valid cursor: use the "Next page" link as it is.');
}
