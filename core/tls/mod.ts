/** TLS certificates: retrieval, parsing, chain judgement, trusted roots. */
export { alternativeNames, describeChain, dnsNames, formatSerial, parseCertificates } from "./certificate_parse.ts";
export { retrieveChain, type RetrievedChain, type RetrieveOptions } from "./certificate_retrieve.ts";
export { connectEndpoints, type EndpointConnector, type EndpointRetrieval, type EndpointsRequest } from "./endpoint_retrieve.ts";
export { judgeChain, matchesHostname, signedBy, type ChainJudgement } from "./chain_verify.ts";
export { TrustStore } from "./trust_store.ts";
export { sameName } from "./name_match.ts";
