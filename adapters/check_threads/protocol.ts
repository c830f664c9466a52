/** Messages between the event loop and a check thread (check_thread.ts). */
import type { EndpointRetrieval, EndpointsRequest } from "../../core/tls/mod.ts";

/** To the thread: connect to a check's addresses (`dueAt` already on the thread's clock). */
export type ConnectMessage = [id: number, request: EndpointsRequest];

/**
 * From the thread: once, when it is ready, its clock (preciseNow()); then for each check every
 * address's chain or failure, or why the thread could not try (a defect).
 */
export type ThreadMessage =
  | [kind: "ready", now: number]
  | [id: number, retrievals: EndpointRetrieval[]]
  | [id: number, retrievals: null, error: string];
export type ConnectAnswer = Exclude<ThreadMessage, [kind: "ready", now: number]>;
