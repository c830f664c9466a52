/** GET /v1/ct/logs: the logs the follower reads, where it is in each, and why one is skipped. */
import { CtLog, type CtLogView } from "../schemas/ct_log.ts";
import { ListEnvelope } from "../schemas/common.ts";
import { iso } from "../base/time.ts";
import { defineOperation, NoQuery } from "./operation.ts";

export const listCtLogs = defineOperation({
  id: "listCtLogs",
  embed: "ctLogs.list",
  method: "GET",
  path: "/v1/ct/logs",
  tag: "Watches",
  summary: "List the Certificate Transparency logs followed",
  description:
    "With CERTKEEPER_CT_SOURCE=logs: every log of the log list the follower reads, its newest verified tree size, " +
    "how far it has read, and why a log is skipped (lastError). Installation-wide: owner and admin keys only. Empty " +
    "until the follower has read the list (and with the search source). One page: the logs of a log list are a few dozen.",
  access: "admin",
  query: NoQuery,
  status: 200,
  response: ListEnvelope(CtLog),
  errors: ["permission_denied"],
  async handle({ services }) {
    // With the search source no log is followed: what a database keeps of an earlier following is not shown.
    if (services.config.ctSource !== "logs") return { data: [], nextCursor: null };
    const logs = await services.store.ctLogs.list();
    const data: CtLogView[] = logs
      .filter((log) => log.listed)
      .map((log) => ({
        url: log.url,
        kind: log.kind,
        treeSize: log.treeSize,
        position: log.position,
        lastError: log.lastError,
        updatedAt: iso(log.updatedAt),
      }));
    return { data, nextCursor: null };
  },
});
