/** CONTRACT §1's configuration: the environment parsed into a Config, with its defaults. */
export { configFromEnv, ConfigError, listenHost, listenPort, DEFAULT_CONFIG, DEFAULT_DELIVERY_RETRY, LEASE_MS, type Config, type LogFormat, type LogLevel } from "./config.ts";
export { matchResolveRule, parseResolveRules, type ResolveRule } from "./resolve_rules.ts";
export { parseCaaIdentities, parseDnsServers, type CaaIdentity, type DnsServer, type DnsServersSetting } from "./dns_settings.ts";
export { changedSettings, variableOf } from "./settings_summary.ts";
export { maskUrl, maskUrlsIn } from "./mask_url.ts";
