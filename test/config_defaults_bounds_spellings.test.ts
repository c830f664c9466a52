/**
 * CONTRACT §1 / docs/configuration.md: defaults, bounds and spellings of the CERTKEEPER_* variables
 * that the broader config tests leave open: the documented defaults not pinned there, the edges of each
 * range (both ends accepted, one past refused naming the variable), switches in any case, values with
 * spaces around them, and the settings line's spelling of what it logs.
 */
import { describe, expect, test } from "bun:test";
import { configFromEnv, DEFAULT_CONFIG } from "../core/config/config.ts";
import { changedSettings } from "../core/config/settings_summary.ts";
import { matchResolveRule, parseResolveRules } from "../core/config/resolve_rules.ts";

const refused = (env: Record<string, string>, variable: string) => {
  expect(() => configFromEnv(env)).toThrow(new RegExp(`^${variable}: `));
};

describe("documented defaults (docs/configuration.md's table)", () => {
  test("every default the table states", () => {
    const config = configFromEnv({});
    expect(config.eventRetentionMs).toBe(90 * 86_400_000);
    expect(config.alertPolicy).toBe("renewal");
    expect(config.ari).toBe(true);
    expect(config.logFormat).toBe("auto");
    expect(config.pagerdutyUrl).toBe("https://events.pagerduty.com");
    expect(config.telegramUrl).toBe("https://api.telegram.org");
    expect(config.smtpUrl).toBeUndefined();
    expect(config.metricsToken).toBeUndefined();
    expect(config.databaseAuthToken).toBeUndefined();
    expect(config.extraCaFile).toBeUndefined();
    expect(config.resolve).toEqual([]);
    expect(config.acmeDirectories.map((d) => d.issuer)).toEqual(["Let's Encrypt", "Google Trust Services", "ZeroSSL"]);
  });
});

describe("ranges: both ends accepted, one past refused naming the variable", () => {
  test("CERTKEEPER_PORT: 0 (any free port) and 65535 are read; 65536 is refused", () => {
    expect(configFromEnv({ CERTKEEPER_PORT: "0" }).port).toBe(0);
    expect(configFromEnv({ CERTKEEPER_PORT: "65535" }).port).toBe(65535);
    refused({ CERTKEEPER_PORT: "65536" }, "CERTKEEPER_PORT");
  });

  test("CERTKEEPER_CHECK_CONCURRENCY: 1024 is read, 1025 refused", () => {
    expect(configFromEnv({ CERTKEEPER_CHECK_CONCURRENCY: "1024" }).checkConcurrency).toBe(1024);
    refused({ CERTKEEPER_CHECK_CONCURRENCY: "1025" }, "CERTKEEPER_CHECK_CONCURRENCY");
  });

  test("a time limit of exactly 10m is read; one millisecond more is refused", () => {
    expect(configFromEnv({ CERTKEEPER_TLS_TIMEOUT: "10m" }).tlsTimeoutMs).toBe(600_000);
    expect(configFromEnv({ CERTKEEPER_DELIVERY_TIMEOUT: "600000ms" }).deliveryTimeoutMs).toBe(600_000);
    refused({ CERTKEEPER_TLS_TIMEOUT: "600001ms" }, "CERTKEEPER_TLS_TIMEOUT");
    refused({ CERTKEEPER_DELIVERY_TIMEOUT: "600001ms" }, "CERTKEEPER_DELIVERY_TIMEOUT");
  });

  test("CERTKEEPER_DNS_SERVERS: eight resolvers are read; a port of 65536 is refused", () => {
    const eight = Array.from({ length: 8 }, (_, i) => `192.0.2.${i + 1}`).join(",");
    expect(configFromEnv({ CERTKEEPER_DNS_SERVERS: eight }).dnsServers).toHaveLength(8);
    expect(configFromEnv({ CERTKEEPER_DNS_SERVERS: "192.0.2.1:65535" }).dnsServers).toEqual([{ address: "192.0.2.1", port: 65535 }]);
    refused({ CERTKEEPER_DNS_SERVERS: "192.0.2.1:65536" }, "CERTKEEPER_DNS_SERVERS");
  });
});

describe("spellings", () => {
  test("switches are read as on/off, true/false, yes/no in any case (the table documents `on`)", () => {
    expect(configFromEnv({ CERTKEEPER_REVOCATION: "on" }).revocation).toBe(true);
    expect(configFromEnv({ CERTKEEPER_ARI: "ON" }).ari).toBe(true);
    expect(configFromEnv({ CERTKEEPER_ALLOW_PRIVATE_TARGETS: "True" }).allowPrivateTargets).toBe(true);
    expect(configFromEnv({ CERTKEEPER_REVOCATION: "OFF" }).revocation).toBe(false);
  });

  test("a value with spaces around it is read as without them; a blank one keeps the default", () => {
    expect(configFromEnv({ CERTKEEPER_PORT: " 8080 " }).port).toBe(8080);
    expect(configFromEnv({ CERTKEEPER_LOG_LEVEL: " debug\n" }).logLevel).toBe("debug");
    expect(configFromEnv({ CERTKEEPER_PORT: "" }).port).toBe(3000);
    expect(configFromEnv({ CERTKEEPER_PORT: "   " }).port).toBe(3000);
  });

  test("CERTKEEPER_ALERT_POLICY takes renewal or days, nothing else", () => {
    expect(configFromEnv({ CERTKEEPER_ALERT_POLICY: "days" }).alertPolicy).toBe("days");
    refused({ CERTKEEPER_ALERT_POLICY: "none" }, "CERTKEEPER_ALERT_POLICY");
  });

  test("CERTKEEPER_SMTP_URL takes smtps:// as well as smtp://", () => {
    expect(configFromEnv({ CERTKEEPER_SMTP_URL: "smtps://mail.example:465" }).smtpUrl).toBe("smtps://mail.example:465");
    refused({ CERTKEEPER_SMTP_URL: "https://mail.example" }, "CERTKEEPER_SMTP_URL");
  });

  test("CERTKEEPER_PAGERDUTY_URL and CERTKEEPER_TELEGRAM_URL are base URLs: a fragment is refused", () => {
    refused({ CERTKEEPER_PAGERDUTY_URL: "https://events.pagerduty.example/#x" }, "CERTKEEPER_PAGERDUTY_URL");
    refused({ CERTKEEPER_TELEGRAM_URL: "https://tg.example/#x" }, "CERTKEEPER_TELEGRAM_URL");
  });

  test("CERTKEEPER_ACME_DIRECTORIES replaces a built-in by name whatever its case", () => {
    const dirs = configFromEnv({ CERTKEEPER_ACME_DIRECTORIES: "ZEROSSL=https://acme.mirror.example/dir" }).acmeDirectories;
    expect(dirs.filter((d) => d.issuer.toLowerCase() === "zerossl")).toEqual([{ issuer: "ZEROSSL", url: "https://acme.mirror.example/dir" }]);
  });

  test("CERTKEEPER_CAA_IDENTITIES: an issuer name may hold '=' (the domain follows the last one)", () => {
    expect(configFromEnv({ CERTKEEPER_CAA_IDENTITIES: "O=Example CA=ca.example" }).caaIdentities).toEqual([{ name: "O=Example CA", domain: "ca.example" }]);
  });

  test("CERTKEEPER_HOST: an IPv6 address in brackets is read as the address; a name with a port is refused saying so", () => {
    expect(configFromEnv({ CERTKEEPER_HOST: "[::1]" }).host).toBe("::1");
    expect(() => configFromEnv({ CERTKEEPER_HOST: "localhost:3000" })).toThrow(/CERTKEEPER_HOST: .*holds a port.*CERTKEEPER_PORT/);
  });

  test("CERTKEEPER_RESOLVE: a rule's name matches whatever case it is written in", () => {
    const rules = parseResolveRules("App.Internal.Example=10.0.0.5,*.Shop.Example=10.0.0.1");
    expect(matchResolveRule(rules, "app.internal.example")?.address).toBe("10.0.0.5");
    expect(matchResolveRule(rules, "www.shop.example")?.address).toBe("10.0.0.1");
  });
});

describe("the settings line logged at start (changedSettings)", () => {
  test("only what differs from the defaults, named by variable, durations in the shortest exact spelling", () => {
    const config = configFromEnv({
      CERTKEEPER_CHECK_INTERVAL: "1500ms",
      CERTKEEPER_CT_INTERVAL: "90m",
      CERTKEEPER_RESOLVE: "a.test=127.0.0.1|127.0.0.2,b.test=none",
    });
    expect(changedSettings(config)).toEqual({
      CERTKEEPER_CHECK_INTERVAL: "1500ms",
      CERTKEEPER_CT_INTERVAL: "90m",
      CERTKEEPER_RESOLVE: "a.test=127.0.0.1|127.0.0.2,b.test=none",
    });
    expect(changedSettings(DEFAULT_CONFIG)).toEqual({});
  });

  test("a setting unset where the default has a value is shown as (unset)", () => {
    expect(changedSettings({ ...DEFAULT_CONFIG, ctToken: undefined }, { ...DEFAULT_CONFIG, ctToken: "x" })).toEqual({ CERTKEEPER_CT_TOKEN: "(unset)" });
  });
});
