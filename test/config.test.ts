import { describe, expect, test } from "bun:test";
import { configFromEnv, DEFAULT_CONFIG } from "../core/config/config.ts";
import { changedSettings } from "../core/config/settings_summary.ts";
import { maskUrl } from "../core/config/mask_url.ts";

describe("configFromEnv()", () => {
  test("CERTKEEPER_DNS_SERVERS: system (the default) and off are words, a bare IPv6 address takes port 53", () => {
    expect(configFromEnv({ CERTKEEPER_DNS_SERVERS: "system" }).dnsServers).toBe("system");
    expect(configFromEnv({ CERTKEEPER_DNS_SERVERS: "off" }).dnsServers).toBe("off");
    expect(configFromEnv({ CERTKEEPER_DNS_SERVERS: "2001:db8::53" }).dnsServers).toEqual([{ address: "2001:db8::53", port: 53 }]);
  });

  test("with nothing set, the defaults of CONTRACT §1", () => {
    expect(configFromEnv({})).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG).toMatchObject({
      host: "127.0.0.1",
      port: 3000,
      databaseUrl: "file:./data/certkeeper.db",
      checkIntervalMs: 6 * 3600_000,
      tlsTimeoutMs: 10_000,
      checkConcurrency: 16,
      checkThreads: 1,
      logLevel: "info",
      allowPrivateTargets: false,
      mailFrom: "certkeeper@localhost",
      deliveryRetryMs: [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000],
      revocation: true,
      ctUrl: "https://api.certspotter.com",
      ctIntervalMs: 3600_000,
      ctToken: undefined,
      ctSource: "search",
      ctLogList: "https://www.gstatic.com/ct/log_list/v3/log_list.json",
      deliveryTimeoutMs: 10_000,
      dnsServers: "system",
      caaIdentities: [],
    });
  });

  test("reads every variable", () => {
    const config = configFromEnv({
      CERTKEEPER_HOST: "0.0.0.0",
      CERTKEEPER_PORT: "8080",
      CERTKEEPER_DATABASE_URL: "http://127.0.0.1:8081",
      CERTKEEPER_DATABASE_AUTH_TOKEN: "tok",
      CERTKEEPER_CHECK_INTERVAL: "500ms",
      CERTKEEPER_TLS_TIMEOUT: "30s",
      CERTKEEPER_CHECK_CONCURRENCY: "4",
      CERTKEEPER_CHECK_THREADS: "0",
      CERTKEEPER_LOG_LEVEL: "debug",
      CERTKEEPER_LOG_FORMAT: "pretty",
      CERTKEEPER_RESOLVE: "a.test=127.0.0.1,*.b.test=none",
      CERTKEEPER_EXTRA_CA_FILE: "/tmp/ca.pem",
      CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
      CERTKEEPER_SMTP_URL: "smtp://u:p@127.0.0.1:2525",
      CERTKEEPER_MAIL_FROM: "alerts@example.com",
      CERTKEEPER_DELIVERY_RETRY: "1s,5m",
      CERTKEEPER_DELIVERY_TIMEOUT: "2500ms",
      CERTKEEPER_METRICS_TOKEN: "m",
      CERTKEEPER_REVOCATION: "off",
      CERTKEEPER_CT_URL: "http://127.0.0.1:9000/",
      CERTKEEPER_CT_INTERVAL: "5m",
      CERTKEEPER_CT_TOKEN: "ct-secret",
      CERTKEEPER_CT_SOURCE: "logs",
      CERTKEEPER_CT_LOG_LIST: "/etc/certkeeper/log_list.json",
      CERTKEEPER_PAGERDUTY_URL: "http://127.0.0.1:9000/",
      CERTKEEPER_TELEGRAM_URL: "https://tg.internal.example/api",
      CERTKEEPER_EVENT_RETENTION: "30d",
      CERTKEEPER_ALERT_POLICY: "days",
      CERTKEEPER_ARI: "off",
      CERTKEEPER_ACME_DIRECTORIES: "Internal CA=https://ca.internal.example/acme/directory, let's encrypt=http://127.0.0.1:14000/dir,Entrust\\, Inc.=https://acme.entrust.example/dir",
      CERTKEEPER_DNS_SERVERS: "127.0.0.1:5353, [::1]:53 ,192.0.2.53",
      CERTKEEPER_CAA_IDENTITIES: "Example Issuing CA=CA.Example.,Internal Root=pki.corp.example, Entrust\\, Inc.=entrust.net,Back\\\\slash=b.example",
    });
    expect(config).toEqual({
      host: "0.0.0.0",
      port: 8080,
      databaseUrl: "http://127.0.0.1:8081",
      databaseAuthToken: "tok",
      checkIntervalMs: 500,
      tlsTimeoutMs: 30_000,
      checkConcurrency: 4,
      checkThreads: 0,
      logLevel: "debug",
      logFormat: "pretty",
      resolve: [
        { pattern: "a.test", address: "127.0.0.1", addresses: ["127.0.0.1"] },
        { pattern: "*.b.test", address: null, addresses: [] },
      ],
      extraCaFile: "/tmp/ca.pem",
      allowPrivateTargets: true,
      smtpUrl: "smtp://u:p@127.0.0.1:2525",
      mailFrom: "alerts@example.com",
      deliveryRetryMs: [1000, 300_000],
      deliveryTimeoutMs: 2500,
      metricsToken: "m",
      revocation: false,
      ctUrl: "http://127.0.0.1:9000",
      ctIntervalMs: 300_000,
      ctToken: "ct-secret",
      ctSource: "logs",
      ctLogList: "/etc/certkeeper/log_list.json",
      pagerdutyUrl: "http://127.0.0.1:9000",
      telegramUrl: "https://tg.internal.example/api",
      eventRetentionMs: 30 * 24 * 3_600_000,
      alertPolicy: "days",
      ari: false,
      acmeDirectories: [
        { issuer: "Internal CA", url: "https://ca.internal.example/acme/directory" },
        { issuer: "let's encrypt", url: "http://127.0.0.1:14000/dir" },
        { issuer: "Entrust, Inc.", url: "https://acme.entrust.example/dir" },
        { issuer: "Google Trust Services", url: "https://dv.acme-v02.api.pki.goog/directory" },
        { issuer: "ZeroSSL", url: "https://acme.zerossl.com/v2/DV90" },
      ],
      dnsServers: [
        { address: "127.0.0.1", port: 5353 },
        { address: "::1", port: 53 },
        { address: "192.0.2.53", port: 53 },
      ],
      caaIdentities: [
        { name: "Example Issuing CA", domain: "ca.example" },
        { name: "Internal Root", domain: "pki.corp.example" },
        { name: "Entrust, Inc.", domain: "entrust.net" },
        { name: "Back\\slash", domain: "b.example" },
      ],
    });
  });

  test.each([
    ["CERTKEEPER_PORT", "http"],
    ["CERTKEEPER_PORT", "70000"],
    ["CERTKEEPER_CHECK_INTERVAL", "6 hours"],
    ["CERTKEEPER_CHECK_INTERVAL", "0s"],
    ["CERTKEEPER_CHECK_CONCURRENCY", "0"],
    ["CERTKEEPER_CHECK_THREADS", "-1"],
    ["CERTKEEPER_CHECK_THREADS", "65"],
    ["CERTKEEPER_CHECK_THREADS", "two"],
    ["CERTKEEPER_LOG_LEVEL", "verbose"],
    ["CERTKEEPER_LOG_FORMAT", "yaml"],
    ["CERTKEEPER_ALLOW_PRIVATE_TARGETS", "maybe"],
    ["CERTKEEPER_RESOLVE", "a.test"],
    ["CERTKEEPER_TLS_TIMEOUT", "25d"],
    ["CERTKEEPER_TLS_TIMEOUT", "601s"],
    ["CERTKEEPER_DELIVERY_TIMEOUT", "11m"],
    ["CERTKEEPER_PORT", "0x1F90"],
    ["CERTKEEPER_PORT", "3e3"],
    ["CERTKEEPER_CHECK_CONCURRENCY", "1e1"],
    ["CERTKEEPER_CHECK_THREADS", "0b11"],
    ["CERTKEEPER_RESOLVE", "app.internal:8443=127.0.0.1"],
    ["CERTKEEPER_RESOLVE", "https://app.internal=127.0.0.1"],
    ["CERTKEEPER_SMTP_URL", "http://mail"],
    ["CERTKEEPER_DELIVERY_RETRY", "5s,,1m"],
    ["CERTKEEPER_REVOCATION", "sometimes"],
    ["CERTKEEPER_CT_URL", "ftp://ct.example"],
    ["CERTKEEPER_CT_URL", "not a url"],
    ["CERTKEEPER_CT_URL", "https://user:token@ct.example"],
    ["CERTKEEPER_ACME_DIRECTORIES", "Internal=https://user@ca.internal/directory"],
    ["CERTKEEPER_CT_INTERVAL", "0s"],
    ["CERTKEEPER_CT_SOURCE", "crtsh"],
    ["CERTKEEPER_CT_SOURCE", "Logs"],
    ["CERTKEEPER_CT_LOG_LIST", "http://lists.example/log_list.json"],
    ["CERTKEEPER_CT_LOG_LIST", "ftp://lists.example/log_list.json"],
    ["CERTKEEPER_PAGERDUTY_URL", "ftp://events.example"],
    ["CERTKEEPER_TELEGRAM_URL", "https://user:pw@api.example"],
    ["CERTKEEPER_EVENT_RETENTION", "forever"],
    ["CERTKEEPER_DELIVERY_TIMEOUT", "0s"],
    ["CERTKEEPER_DELIVERY_TIMEOUT", "soon"],
    ["CERTKEEPER_ALERT_POLICY", "weekly"],
    ["CERTKEEPER_ALERT_POLICY", "Renewal"],
    ["CERTKEEPER_ARI", "sometimes"],
    ["CERTKEEPER_ACME_DIRECTORIES", "Let's Encrypt"],
    ["CERTKEEPER_ACME_DIRECTORIES", "Internal=ftp://ca.internal"],
    ["CERTKEEPER_ACME_DIRECTORIES", "=https://ca.example/dir"],
    ["CERTKEEPER_ACME_DIRECTORIES", "Internal CA=https://a.internal/dir,internal ca=https://b.internal/dir"],
    ["CERTKEEPER_DNS_SERVERS", "dns.example.com"],
    ["CERTKEEPER_DNS_SERVERS", "127.0.0.1:0"],
    ["CERTKEEPER_DNS_SERVERS", "127.0.0.1:99999"],
    ["CERTKEEPER_DNS_SERVERS", "[::1]:x"],
    ["CERTKEEPER_DNS_SERVERS", ","],
    ["CERTKEEPER_DNS_SERVERS", "1.1.1.1,1.1.1.2,1.1.1.3,1.1.1.4,1.1.1.5,1.1.1.6,1.1.1.7,1.1.1.8,1.1.1.9"],
    ["CERTKEEPER_CAA_IDENTITIES", "Let's Encrypt"],
    ["CERTKEEPER_CAA_IDENTITIES", "=letsencrypt.org"],
    ["CERTKEEPER_CAA_IDENTITIES", "Example CA=not a domain"],
    // A comma not escaped still ends the pair: the name before it alone is not a pair.
    ["CERTKEEPER_CAA_IDENTITIES", "Entrust, Inc.=entrust.net"],
  ])("refuses %s=%p naming the variable", (name, value) => {
    expect(() => configFromEnv({ [name]: value })).toThrow(name);
  });
});

describe("credentials in the settings line and the database URL logged at start", () => {
  test.each([
    // A password holding an @ is the URL parser's (and so the transport's) up to the authority's last @.
    ["smtp://ops:s3cret@Tail-Of-Password@mail.example:587", "smtp://ops:********@mail.example:587", "s3cret@Tail-Of-Password"],
    ["smtp://ops:plain@mail.example:587", "smtp://ops:********@mail.example:587", "plain"],
    ["libsql://t0ken-only@db.example?authToken=abc#x", "libsql://********@db.example?authToken=********#x", "t0ken-only"],
    ["https://ct.example/v1?key=k3yValue&region=eu&api_key=other&sig=s1g", "https://ct.example/v1?key=********&region=eu&api_key=********&sig=********", null],
    // A query may hold an apostrophe: a URL's token is masked up to the next parameter whatever it holds.
    ["https://ct.example/v1?token=ab'cd&x=1", "https://ct.example/v1?token=********&x=1", null],
    ["http://user:p@ss/word@db.example/path", "http://user:********@ss/word@db.example/path", null],
    ["file:./data/certkeeper.db", "file:./data/certkeeper.db", null],
  ])("maskUrl(%p) is %p", (url, masked, password) => {
    expect(maskUrl(url)).toBe(masked);
    if (password !== null) expect(decodeURIComponent(new URL(url).password || new URL(url).username)).toBe(password);
  });

  test("the settings line masks the whole of an SMTP password that holds an @", () => {
    const logged = changedSettings({ ...DEFAULT_CONFIG, smtpUrl: "smtp://ops:s3cret@Tail-Of-Password@mail.example:587" });
    expect(logged.CERTKEEPER_SMTP_URL).toBe("smtp://ops:********@mail.example:587");
  });

  test("the settings line masks credentials in CERTKEEPER_ACME_DIRECTORIES, each directory as issuer=URL", () => {
    const logged = changedSettings(
      configFromEnv({ CERTKEEPER_ACME_DIRECTORIES: "Internal CA=https://acme.internal.example/directory?token=t0kenValue123" }),
    );
    expect(logged.CERTKEEPER_ACME_DIRECTORIES).toStartWith("Internal CA=https://acme.internal.example/directory?token=********");
    expect(JSON.stringify(logged)).not.toMatch(/t0kenValue123/);
  });

  test("the settings line writes switches as the variables are spelled: off, false", () => {
    const logged = changedSettings(configFromEnv({ CERTKEEPER_REVOCATION: "off", CERTKEEPER_ARI: "off", CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true" }));
    expect([logged.CERTKEEPER_REVOCATION, logged.CERTKEEPER_ARI, logged.CERTKEEPER_ALLOW_PRIVATE_TARGETS]).toEqual(["off", "off", "true"]);
  });
});
