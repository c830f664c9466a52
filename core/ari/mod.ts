/** ACME Renewal Information (RFC 9773): a leaf's certID, and the CA's suggested renewal window. */
export { ariCertId } from "./cert_id.ts";
export { AriClient, ariCacheKey, ARI_MAX_BYTES, type AriClientOptions, type AriLeaf } from "./ari_client.ts";
export { AriFailure, DEFAULT_RETRY, readDirectory, readRenewalInfo, retryDelay, RETRY_AFTER_MAX, RETRY_AFTER_MIN, type SuggestedWindow } from "./renewal_answer.ts";
