/**
 * /metrics and /readyz details an operator's dashboards and probes rely on (CONTRACT §10, §11, §14):
 * a check duration exactly on a bucket's bound counts in that bucket (`le` is "less than or equal"),
 * a certificate never asked about revocation is labelled `not_checked`, each address's series carries
 * that address's own status (a node serving an expired certificate shows expired), the scrape is not
 * cached, and /readyz answers 503 when the database never answers, rather than hanging.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { createMemoryStore } from "../adapters/memory/mod.ts";
import { scrapeMetrics, ServiceMetrics } from "../core/metrics/scrape.ts";
import { readyz } from "../core/http/health.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { DAY } from "./support/pki.ts";
import { certificateDetails, certificateRecord } from "./support/store_conformance/factories.ts";

const TOKEN = "metrics-series-t0ken";
let h: Harness;

beforeAll(async () => {
  h = await createHarness({ config: { metricsToken: TOKEN }, limits: { certificates: 1000 } });
});
afterAll(async () => {
  await h?.close();
});

async function scrapeText(store = h.store, metrics = new ServiceMetrics()): Promise<string> {
  let text = "";
  for await (const chunk of scrapeMetrics({ store, metrics, now: Date.now() })) text += chunk;
  return text;
}

/** The sample lines of `name` (exactly that name, with labels). */
const lines = (text: string, name: string) => text.split("\n").filter((line) => line.startsWith(`${name}{`));

describe("the check duration histogram", () => {
  test("a duration equal to a bucket's bound counts in that bucket", async () => {
    const metrics = new ServiceMetrics();
    metrics.observeCheck({ ok: true, seconds: 0.005 });
    metrics.observeCheck({ ok: true, seconds: 1 });
    const text = await scrapeText(createMemoryStore(), metrics);
    const families = parsePrometheusTextFormat(text) as Array<{ name: string; metrics: Array<{ buckets?: Record<string, string>; count?: string }> }>;
    const histogram = families.find((f) => f.name === "certkeeper_check_duration_seconds")!.metrics[0]!;
    expect(Number(histogram.buckets!["0.0025"])).toBe(0);
    expect(Number(histogram.buckets!["0.005"])).toBe(1);
    expect(Number(histogram.buckets!["0.5"])).toBe(1);
    expect(Number(histogram.buckets!["1"])).toBe(2);
  });
});

describe("per-certificate series", () => {
  test("a certificate never asked about revocation is labelled not_checked", async () => {
    const store = createMemoryStore();
    const org = { organizationId: "org_series", mode: "live" as const };
    const record = certificateRecord(org, { domain: "never-asked.example.com", notBefore: Date.now() - 10 * DAY, notAfter: Date.now() + 80 * DAY });
    delete (record.details as { revocation?: unknown }).revocation;
    expect(await store.certificates.insert(record, { limit: 10, events: [] })).toBe("created");
    const series = lines(await scrapeText(store), "certkeeper_certificate_revocation_status");
    expect(series).toHaveLength(1);
    expect(series[0]).toContain('revocation="not_checked"');
  });

  test("each address's series carries that address's own status: the node still serving an expired certificate shows expired", async () => {
    const store = createMemoryStore();
    const org = { organizationId: "org_series", mode: "live" as const };
    const domain = "two-nodes.example.com";
    const fresh = certificateDetails(domain, { notBefore: Date.now() - 10 * DAY, notAfter: Date.now() + 80 * DAY });
    const stale = certificateDetails(domain, { notBefore: Date.now() - 100 * DAY, notAfter: Date.now() - DAY });
    const record = certificateRecord(org, {
      domain,
      details: fresh,
      endpoints: [
        { address: "192.0.2.10", fingerprint: fresh.fingerprintSha256!, details: fresh, problem: null, failure: null, tls: null },
        { address: "192.0.2.11", fingerprint: stale.fingerprintSha256!, details: stale, problem: null, failure: null, tls: null },
      ],
    });
    expect(await store.certificates.insert(record, { limit: 10, events: [] })).toBe("created");
    const series = lines(await scrapeText(store), "certkeeper_endpoint_expiry_timestamp_seconds");
    const statusOf = (address: string) => /status="([a-z_]+)"/.exec(series.find((line) => line.includes(`address="${address}"`)) ?? "")?.[1];
    expect({ fresh: statusOf("192.0.2.10"), stale: statusOf("192.0.2.11") }).toEqual({ fresh: "valid", stale: "expired" });
  });
});

describe("the scrape's answer", () => {
  test("is never cached", async () => {
    const response = await h.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
  });
});

describe("/readyz", () => {
  test("a database that never answers: 503 with the reason, within seconds, not a probe left hanging", async () => {
    const store = createMemoryStore();
    const hanging = Object.assign(Object.create(Object.getPrototypeOf(store)), store, { ping: () => new Promise<void>(() => {}) });
    const started = Date.now();
    const response = await readyz(hanging);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "unavailable", reason: "The database does not answer." });
    expect(Date.now() - started).toBeLessThan(4000);
  });
});
