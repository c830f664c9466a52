/**
 * core/dns: what DNS says about a certificate (CONTRACT §22). A stub resolver for CAA, TLSA and TXT
 * records (UDP, TCP on truncation, CNAMEs followed), the CAA judgement of RFC 8659, DANE for SMTP
 * (RFC 7672) and MTA-STS (RFC 8461), drawn together at each check by the DnsInspector.
 */
export { DnsClient, DnsFailure, MAX_CNAME_HOPS, canonical, type DnsClientOptions, type DnsLookupResult, type DnsQuestionType, type RecordSet } from "./dns_client.ts";
export { MAX_RECORDS, UDP_PAYLOAD } from "./_exchange.ts";
export { parseResolvConf, systemDnsServers } from "./system_servers.ts";
export { BUILT_IN_CAA_IDENTITIES, issuerCaaDomain, issuerDomainOf, judgeCaa, presentCaaRecord, relevantCaaSet, type CaaSet } from "./caa.ts";
export { daneVerdict, lookupTlsa, usableTlsa, type ServedChain, type TlsaFinding } from "./dane.ts";
export { MTA_STS_MAX_BYTES, fetchStsPolicy, lookupStsRecord, mxMatches, parseStsPolicy, parseStsRecords } from "./mta_sts.ts";
export { DnsInspector, type DnsCheck, type DnsConclusion, type DnsInspectorOptions, type DnsTarget, type ServedEndpoint } from "./dns_inspector.ts";
