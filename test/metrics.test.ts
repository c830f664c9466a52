/**
 * GET /metrics (CONTRACT §10): Prometheus text that a real parser reads, the certificates' gauges equal
 * to what the API says, counters that move with checks and delivery attempts, the operator's token rule,
 * and nothing secret in any label.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import parsePrometheusTextFormat, { type PrometheusFamily } from "parse-prometheus-text-format";
import { compileErrors, validate } from "@readme/openapi-parser";
import { buildOpenApiDocument } from "../core/openapi/document.ts";
import { OPERATIONS } from "../core/operations/mod.ts";
import { decadeBuckets, escapeLabelValue, familyHeader, sampleLine } from "../core/metrics/exposition.ts";
import { scrapeMetrics, ServiceMetrics } from "../core/metrics/scrape.ts";
import type { Store } from "../core/store/ports.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { chainPem, createLeaf, DAY, type Issued } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";

const TOKEN = "m3trics-t0ken-Sup3rSecret";
const HOOK_SECRET_VALUES = ["hdr-s3cret-value-1", "Bearer hdr-s3cret-t0ken-2"];
const CHAT_TOKEN = "d1scord-webh00k-t0ken";

let h: Harness;
let transports: ReturnType<typeof createTransports>;
let good: HttpReceiver;
let broken: HttpReceiver;
const servers: TlsTestServer[] = [];
/** Every secret the service was given or made: none may appear in the exposition. */
const secrets: string[] = [TOKEN, ...HOOK_SECRET_VALUES, CHAT_TOKEN];
const channels: { good?: string; broken?: string } = {};
let unreachableId: string;
let validId: string;

async function serve(domain: string, options: { daysLeft: number; issuer?: Issued | null }): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const issuer = options.issuer === null ? undefined : (options.issuer ?? rsaIntermediate);
  const leaf = await createLeaf({ issuer, dnsNames: [domain], notAfter: new Date(Date.now() + options.daysLeft * DAY + 3_600_000) });
  const server = await startTlsServer({ cert: issuer ? chainPem(leaf, issuer) : leaf.certPem, key: leaf.keyPem });
  servers.push(server);
  return server;
}

async function add(label: string, options: { daysLeft: number; issuer?: Issued | null; key?: string }): Promise<string> {
  const domain = `${label}.metrics.${TEST_DOMAIN}`;
  const server = await serve(domain, options);
  return expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port }, key: options.key }), 201).id;
}

const scrapeText = async (authorization = `Bearer ${TOKEN}`) => {
  const response = await h.request("GET", "/metrics", { key: null, headers: { authorization } });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return response.body as string;
};

/** Parses with parse-prometheus-text-format, after the checks it does not make itself. */
function parse(text: string): Map<string, PrometheusFamily> {
  expect(text.endsWith("\n")).toBe(true);
  const families = parsePrometheusTextFormat(text);
  const names = families.map((family) => family.name);
  // A family split in two groups would come back twice: the format forbids it.
  expect(names.length).toBe(new Set(names).size);
  for (const family of families) {
    expect({ name: family.name, typed: family.type !== "UNTYPED", help: family.help.length > 10 }).toEqual({
      name: family.name,
      typed: true,
      help: true,
    });
  }
  return new Map(families.map((family) => [family.name, family]));
}

const scrape = async () => parse(await scrapeText());

function value(families: Map<string, PrometheusFamily>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  if (!family) throw new Error(`no family ${name}`);
  const matches = family.metrics.filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  if (matches.length !== 1) throw new Error(`${matches.length} series of ${name} match ${JSON.stringify(labels)}`);
  return Number(matches[0]!.value);
}

beforeAll(async () => {
  const { root, strangerRoot } = await testPki();
  transports = await loopbackTransports();
  h = await createHarness({ store: "libsql", transports, config: { metricsToken: TOKEN, deliveryTimeoutMs: 1000 } });
  secrets.push(...Object.values(h.keys).map((k) => k.key));
  good = await startHttpReceiver();
  broken = await startHttpReceiver();
  broken.answer = () => ({ status: 500 });

  // Channels first, so the events of the certificates below wait as pending deliveries (no loop runs here).
  const hook = expectData(
    await h.request("POST", "/v1/channels", {
      body: { type: "webhook", name: "Hook", config: { url: good.url, headers: { "X-Api-Key": HOOK_SECRET_VALUES[0], Authorization: HOOK_SECRET_VALUES[1] } } },
    }),
    201,
  );
  secrets.push(hook.config.signingSecret);
  channels.good = hook.id;
  channels.broken = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Broken", config: { url: broken.url } } }), 201).id;
  expectData(
    await h.request("POST", "/v1/channels", {
      body: { type: "discord", name: "Chat", config: { webhookUrl: `https://discord.com/api/webhooks/42/${CHAT_TOKEN}` } },
    }),
    201,
  );

  validId = await add("valid", { daysLeft: 90 });
  await add("expiring", { daysLeft: 10 });
  await add("expired", { daysLeft: -3 });
  await add("selfsigned", { daysLeft: 60, issuer: null });
  await add("stranger", { daysLeft: 60, issuer: strangerRoot });
  await add("testmode", { daysLeft: 200, key: h.keys.test.key });
  unreachableId = await add("unreachable", { daysLeft: 45 });
  await servers.at(-1)!.close();
  expect(expectData(await h.request("POST", `/v1/certificates/${unreachableId}/check`), 200).status).toBe("unreachable");
});

afterAll(async () => {
  await h.close();
  await transports.close();
  await Promise.all([good.close(), broken.close(), ...servers.map((s) => s.close())]);
});

describe("GET /metrics", () => {
  test("is Prometheus text a real parser reads: every family once, typed, with help", async () => {
    const families = await scrape();
    expect([...families.keys()].sort()).toEqual([
      "certkeeper_ari_requests_total",
      "certkeeper_build_info",
      "certkeeper_certificate_chain_expiry_timestamp_seconds",
      "certkeeper_certificate_days_until_expiry",
      "certkeeper_certificate_expiry_timestamp_seconds",
      "certkeeper_certificate_renewal_deadline_timestamp_seconds",
      "certkeeper_certificate_revocation_status",
      "certkeeper_certificates",
      "certkeeper_check_duration_seconds",
      "certkeeper_checks_total",
      "certkeeper_ct_backlog_entries",
      "certkeeper_ct_entries_total",
      "certkeeper_ct_polls_total",
      "certkeeper_deliveries_pending",
      "certkeeper_deliveries_total",
      "certkeeper_dns_lookups_total",
      "certkeeper_endpoint_expiry_timestamp_seconds",
      "certkeeper_revocation_requests_total",
      "process_resident_memory_bytes",
      "process_start_time_seconds",
    ]);
    expect(families.get("certkeeper_checks_total")!.type).toBe("COUNTER");
    expect(families.get("certkeeper_check_duration_seconds")!.type).toBe("HISTOGRAM");
    expect(families.get("certkeeper_certificate_days_until_expiry")!.type).toBe("GAUGE");
    expect(families.get("certkeeper_deliveries_total")!.help).toContain("attempts");
    expect(value(families, "certkeeper_build_info")).toBe(1);
    // Every type and result of DNS question, from zero: this harness's names are never asked of the system's resolvers.
    const dns = families.get("certkeeper_dns_lookups_total")!;
    expect(dns.type).toBe("COUNTER");
    expect(dns.metrics.map((m) => `${m.labels?.type}/${m.labels?.result}=${m.value}`).sort()).toEqual(
      ["CAA", "CNAME", "TLSA", "TXT"].flatMap((type) => ["error", "nxdomain", "ok", "timeout"].map((result) => `${type}/${result}=0`)),
    );
  });

  test("one series per certificate, equal to what the API answers: expiry, days until expiry, status, labels", async () => {
    const families = await scrape();
    const listed = [
      ...expectData(await h.request("GET", "/v1/certificates?limit=100"), 200).map((c: any) => ({ ...c, mode: "live" })),
      ...expectData(await h.request("GET", "/v1/certificates?limit=100", { key: h.keys.test.key }), 200).map((c: any) => ({ ...c, mode: "test" })),
    ];
    expect(new Set(listed.map((c) => c.status))).toEqual(new Set(["valid", "expiring", "expired", "invalid", "unreachable"]));
    for (const name of ["certkeeper_certificate_days_until_expiry", "certkeeper_certificate_expiry_timestamp_seconds"]) {
      expect(families.get(name)!.metrics.length).toBe(listed.length);
    }
    for (const c of listed) {
      const labels = { organization: h.org.id, mode: c.mode, domain: c.domain, port: String(c.port), certificate_id: c.id, status: c.status };
      expect(families.get("certkeeper_certificate_days_until_expiry")!.metrics.find((m) => m.labels?.domain === c.domain)!.labels).toEqual(labels);
      expect({ domain: c.domain, days: value(families, "certkeeper_certificate_days_until_expiry", labels) }).toEqual({
        domain: c.domain,
        days: c.daysUntilExpiry,
      });
      expect(value(families, "certkeeper_certificate_expiry_timestamp_seconds", labels)).toBe(Date.parse(c.expiresAt) / 1000);
    }
    expect(listed.find((c) => c.domain.startsWith("expired."))!.daysUntilExpiry).toBeLessThan(0);
    // One endpoint series per address that gave a certificate, equal to the API's endpoints.
    const endpoints = listed.flatMap((c) => c.endpoints.filter((e: any) => e.expiresAt).map((e: any) => ({ c, e })));
    expect(endpoints.length).toBeGreaterThan(0);
    expect(families.get("certkeeper_endpoint_expiry_timestamp_seconds")!.metrics.length).toBe(endpoints.length);
    for (const { c, e } of endpoints) {
      const labels = { organization: h.org.id, mode: c.mode, domain: c.domain, port: String(c.port), certificate_id: c.id, status: e.status, protocol: c.protocol, address: e.address };
      expect(value(families, "certkeeper_endpoint_expiry_timestamp_seconds", labels)).toBe(Date.parse(e.expiresAt) / 1000);
    }
    for (const c of listed.filter((c) => c.chainExpiresAt)) {
      const labels = { organization: h.org.id, mode: c.mode, domain: c.domain, port: String(c.port), certificate_id: c.id, status: c.status };
      expect(value(families, "certkeeper_certificate_chain_expiry_timestamp_seconds", labels)).toBe(Date.parse(c.chainExpiresAt) / 1000);
    }
    for (const status of ["valid", "expiring", "expired", "invalid", "unreachable"]) {
      expect({ status, count: value(families, "certkeeper_certificates", { status }) }).toEqual({
        status,
        count: listed.filter((c) => c.status === status).length,
      });
    }
  });

  test("checks_total moves by result with each retrieval, and the histogram counts every one", async () => {
    const before = await scrape();
    await h.request("POST", `/v1/certificates/${validId}/check`);
    await h.request("POST", `/v1/certificates/${validId}/check`);
    await h.request("POST", `/v1/certificates/${unreachableId}/check`);
    const afterText = await scrapeText();
    const after = parse(afterText);
    const moved = (result: string) => value(after, "certkeeper_checks_total", { result }) - value(before, "certkeeper_checks_total", { result });
    expect({ ok: moved("ok"), failed: moved("failed") }).toEqual({ ok: 2, failed: 1 });
    // Adds and checks of beforeAll count too: 7 adds (all retrieved) and one failed check.
    expect(value(before, "certkeeper_checks_total", { result: "ok" })).toBe(7);
    expect(value(before, "certkeeper_checks_total", { result: "failed" })).toBe(1);

    const histogram = after.get("certkeeper_check_duration_seconds")!.metrics[0]!;
    // In the order written (the parser's object puts integer-like keys first).
    const bounds = [...afterText.matchAll(/^certkeeper_check_duration_seconds_bucket\{le="([^"]+)"\}/gm)].map((m) => m[1]!);
    expect(bounds).toEqual(["0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "+Inf"]);
    const cumulative = bounds.map((le) => Number(histogram.buckets![le]));
    expect(cumulative).toEqual([...cumulative].sort((a, b) => a - b));
    expect(Number(histogram.count)).toBe(value(after, "certkeeper_checks_total", { result: "ok" }) + value(after, "certkeeper_checks_total", { result: "failed" }));
    expect(Number(histogram.buckets!["+Inf"])).toBe(Number(histogram.count));
    expect(Number(histogram.sum)).toBeGreaterThan(0);
  });

  test("deliveries_total counts attempts by channel type and result; pending deliveries match the events API", async () => {
    const before = await scrape();
    expect(expectData(await h.request("POST", `/v1/channels/${channels.good}/test`), 200).status).toBe("delivered");
    expect(expectData(await h.request("POST", `/v1/channels/${channels.broken}/test`), 200).status).toBe("failed");
    expect(expectData(await h.request("POST", `/v1/channels/${channels.broken}/test`), 200).status).toBe("failed");
    const after = await scrape();
    const moved = (type: string, result: string) =>
      value(after, "certkeeper_deliveries_total", { type, result }) - value(before, "certkeeper_deliveries_total", { type, result });
    expect({ delivered: moved("webhook", "delivered"), failed: moved("webhook", "failed"), email: moved("email", "failed") }).toEqual({
      delivered: 1,
      failed: 2,
      email: 0,
    });
    // Every channel type (7) by result (delivered, failed).
    expect(after.get("certkeeper_deliveries_total")!.metrics.length).toBe(14);

    let pending = 0;
    for (const key of [h.keys.owner.key, h.keys.test.key]) {
      for (const event of expectData(await h.request("GET", "/v1/events?limit=100", { key }), 200)) {
        pending += event.deliveries.filter((d: any) => d.status === "pending").length;
      }
    }
    expect(pending).toBeGreaterThan(0);
    expect(value(after, "certkeeper_deliveries_pending")).toBe(pending);
  });

  test("no label and no line holds a key, a token, a signing secret, a header value or a webhook URL", async () => {
    const text = await scrapeText();
    for (const secret of secrets) expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
    for (const url of [good.url, broken.url, "discord.com"]) expect(text).not.toContain(url);
    const labelNames = new Set<string>();
    for (const family of parse(text).values()) for (const m of family.metrics) for (const k of Object.keys(m.labels ?? {})) labelNames.add(k);
    expect([...labelNames].sort()).toEqual(["address", "certificate_id", "domain", "mode", "organization", "port", "protocol", "result", "revocation", "runtime", "source", "status", "type", "version"]);
  });
});

describe("GET /metrics: the token rule", () => {
  test("without the token, another scheme, a wrong token or an API key: 401 with the error envelope", async () => {
    const send = (headers: Record<string, string>) => h.request("GET", "/metrics", { key: null, headers });
    expectError(await send({}), 401, "missing_api_key");
    for (const authorization of ["", "Basic dXNlcjpwYXNz", "Bearer", `Token ${TOKEN}`]) expectError(await send({ authorization }), 401, "missing_api_key");
    for (const authorization of [`Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN}x`, `Bearer ${TOKEN} ${TOKEN}`, `Bearer ${h.keys.owner.key}`]) {
      expectError(await send({ authorization }), 401, "invalid_api_key");
    }
  });

  test("with the token: 200, whatever the case of the scheme; other methods are 405", async () => {
    expect(await scrapeText(`bEaReR ${TOKEN}`)).toContain("certkeeper_checks_total");
    expectError(await h.request("POST", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } }), 405, "method_not_allowed");
  });

  test("without CERTKEEPER_METRICS_TOKEN, /metrics is no route: 404 not_found for any method, and undocumented", async () => {
    const off = await createHarness();
    try {
      for (const method of ["GET", "POST"]) {
        const response = await off.request(method, "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
        expectError(response, 404, "not_found");
      }
      const document = (await off.request("GET", "/v1/openapi.json", { key: null })).body;
      expect(document.paths["/metrics"]).toBeUndefined();
    } finally {
      await off.close();
    }
  });

  test("the document served with the token names /metrics and stays valid OpenAPI 3.1", async () => {
    const document = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
    expect(document).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(OPERATIONS, { version: document.info.version, metrics: true }))));
    expect(Object.keys(document.paths["/metrics"].get.responses).sort()).toEqual(["200", "401"]);
    const result = await validate(structuredClone(document));
    if (!result.valid) throw new Error(compileErrors(result));
  });
});

describe("the exposition format", () => {
  test("label values escape backslash, double quote and line feed, and read back unchanged", () => {
    const tricky = 'C:\\dir\\"quoted"\nnext line';
    expect(escapeLabelValue(tricky)).toBe('C:\\\\dir\\\\\\"quoted\\"\\nnext line');
    const text = familyHeader("t_gauge", "gauge", "A help with a \\ and a\nnewline.") + sampleLine("t_gauge", { path: tricky, n: 3 }, 1.5);
    const [family] = parsePrometheusTextFormat(text);
    expect(family).toEqual({ name: "t_gauge", help: "A help with a \\ and a\nnewline.", type: "GAUGE", metrics: [{ labels: { path: tricky, n: "3" }, value: "1.5" }] });
  });

  test("histogram buckets run 1, 2.5, 5 per decade from 1 ms to 10 s", () => {
    expect(decadeBuckets(0.001, 10)).toEqual([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
  });

  test("certificates are read in pages of the store and each is rendered once, whatever the page size", async () => {
    const limits: number[] = [];
    const paged: Store = {
      ...h.store,
      certificates: {
        ...h.store.certificates,
        listAll: (query) => {
          limits.push(query.limit);
          return h.store.certificates.listAll(query);
        },
      },
    };
    const metrics = new ServiceMetrics();
    const render = async (pageSize?: number) => {
      let text = "";
      for await (const chunk of scrapeMetrics({ store: paged, metrics, now: Date.now(), pageSize })) text += chunk;
      return text.replace(/^process_resident_memory_bytes .*$/m, "");
    };
    const whole = await render();
    expect(limits).toEqual([500, 500, 500, 500, 500, 500]);
    limits.length = 0;
    expect(await render(2)).toBe(whole);
    // 7 certificates in pages of 2: 4 reads per pass, six passes (one per per-certificate family).
    expect(limits).toEqual(Array(24).fill(2));
  });
});
