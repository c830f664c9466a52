/** core/watches: new certificates for watched domains, found in Certificate Transparency (CONTRACT §15). */
export { WatchPoller, type IssuanceSource, type PollResult, type WatchPollerOptions } from "./watch_poller.ts";
export { CtClient, CtFailure, type CtClientOptions } from "./ct_client.ts";
export { authorizedIssuer, isDnsName, issuedEventData, namesToMonitor, nameAttributes, normalizeDnsName, readIssuance, type Issuance } from "./issuance.ts";
