/**
 * From what every address served to what a check means for the certificate (CONTRACT §11): the
 * certificate-level fields follow the answering endpoint whose leaf expires first; the certificate is
 * unreachable only when no endpoint answered.
 */
import type { EndpointRecord } from "../base/records.ts";
import type { CheckOutcome } from "./check_apply.ts";

/** One address's result, with the message of its failure (not kept once the check is applied). */
export type EndpointOutcome = EndpointRecord & { message?: string };

/** The outcome of a check over `endpoints` (IPv4 first, each in numeric order, at least one). */
export function outcomeOfEndpoints(endpoints: EndpointOutcome[]): CheckOutcome {
  const answering = endpoints.filter((endpoint) => endpoint.details !== null);
  const stored: EndpointRecord[] = endpoints.map(({ message: _message, ...endpoint }) => endpoint);
  if (answering.length === 0) {
    const first = endpoints[0]!;
    // Each distinct reason once. A refused address is named by its kind only (the messages say
    // "resolves to a private address"): callers must not map the server's network through us.
    const message = [...new Set(endpoints.map((e) => e.message ?? e.failure ?? "no certificate"))].join("; ");
    return { ok: false, reason: first.failure ?? "tls_error", message, endpoints: stored };
  }
  let chosen = answering[0]!;
  for (const endpoint of answering) if (endpoint.details!.notAfter < chosen.details!.notAfter) chosen = endpoint;
  return {
    ok: true,
    // Every address's chain and failure: any change on any node is a change of the certificate's state.
    fingerprint: endpoints.length === 1 ? chosen.fingerprint! : endpoints.map((e) => `${e.address}=${e.fingerprint ?? `!${e.failure}`}`).join(";"),
    details: chosen.details!,
    problem: chosen.problem ?? answering.find((endpoint) => endpoint.problem)?.problem ?? null,
    tls: chosen.tls,
    endpoints: stored,
  };
}
