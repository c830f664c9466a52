/** Messages between the event loop and a check thread (check_thread.ts). */
import type { EndpointRetrieval, EndpointsRequest } from "../../core/tls/mod.ts";

/** To the thread: connect to a check's addresses. */
export type ConnectMessage = [id: number, request: EndpointsRequest];

/** From the thread: every address's chain or failure, or why the thread could not try (a defect). */
export type ConnectAnswer = [id: number, retrievals: EndpointRetrieval[]] | [id: number, retrievals: null, error: string];
