/**
 * The settings area's way into the API: the dashboard's view of an organization's certificates,
 * channels and watches as the signed-in user, every read and write through the request pipeline's
 * operations. A face onto the operations like core/http (HTTP) and the embedding; createCore builds it
 * as core.accounts.workspace and adapters/web renders it.
 *
 * @example
 * const page = await core.accounts.workspace.as({ user, organization }, "live").dashboard({ status: "expiring" });
 */
export { Workspace, LIST_TAKES_TAGS } from "./workspace.ts";
export type { Actor, ActingWorkspace, Overview, CertificateForm, DashboardQuery, DashboardPage, CertificateDetail } from "./workspace.ts";
