/**
 * What GET /metrics shows: this process's counters (checks, delivery attempts) and, computed at scrape
 * time from the store, one gauge per certificate of every organization. Certificates are read in pages
 * and rendered page by page, so a scrape of 100,000 certificates never holds them all at once.
 *
 * @example
 * const metrics = new ServiceMetrics();
 * metrics.observeCheck({ ok: true, seconds: 0.12 });
 * for await (const chunk of scrapeMetrics({ store, metrics, now: Date.now() })) stream.write(chunk);
 */
import packageJson from "../../package.json" with { type: "json" };
import { CERTIFICATE_STATUSES, certificateStatus, endpointStatus, type CertificateStatus } from "../certificates/status.ts";
import type { CertificateRecord, ChannelType, Mode } from "../base/records.ts";
import type { Store } from "../store/ports.ts";
import { Counter, decadeBuckets, familyHeader, Histogram, sampleLine } from "./exposition.ts";
import { renewalDeadline } from "../renewal/mod.ts";

const CHANNEL_TYPES: readonly ChannelType[] = ["email", "discord", "slack", "webhook", "pagerduty", "teams", "telegram"];
/** Certificates read from the store per page. */
const PAGE_SIZE = 500;

/** The instruments this process updates as it works; one per process, like its counters. */
export class ServiceMetrics {
  readonly startedAt = Date.now();

  readonly checks = new Counter(
    "certkeeper_checks_total",
    "Certificate retrievals made by this process (scheduled checks, manual checks and adds): " +
      "result is ok when a certificate was retrieved, else failed (DNS failure, refused, timeout, no TLS, refused address).",
    ["result"],
    [{ result: "ok" }, { result: "failed" }],
  );

  readonly checkDuration = new Histogram(
    "certkeeper_check_duration_seconds",
    "Time one certificate retrieval took in this process (resolve, connect, TLS handshake, chain checks, and the CAA, TLSA and MTA-STS lookups made beside them), successful or not.",
    decadeBuckets(0.001, 10),
  );

  readonly deliveries = new Counter(
    "certkeeper_deliveries_total",
    "Notification delivery attempts made by this process, by channel type and outcome; it counts attempts, not " +
      "notifications: a notification that fails twice and then gets through counts failed 2 and delivered 1. " +
      "Channel test sends are counted too.",
    ["type", "result"],
    CHANNEL_TYPES.flatMap((type) => [{ type, result: "delivered" }, { type, result: "failed" }]),
  );

  readonly ctPolls = new Counter(
    "certkeeper_ct_polls_total",
    "Certificate Transparency polls of watches made by this process: ok, failed (the CT service failed or did not " +
      "answer) or rate_limited (it answered 429).",
    ["result"],
    [{ result: "ok" }, { result: "failed" }, { result: "rate_limited" }],
  );

  readonly revocationRequests = new Counter(
    "certkeeper_revocation_requests_total",
    "Requests this process sent to OCSP responders and CRL distribution points (cached answers send none).",
    ["source"],
    [{ source: "ocsp" }, { source: "crl" }],
  );

  readonly ariRequests = new Counter(
    "certkeeper_ari_requests_total",
    "Requests this process sent to CAs for their renewal information (ACME ARI): ok when answered, error otherwise " +
      "(a failed directory, an HTTP error, a malformed answer, a timeout). Answers are shared, so most checks send none.",
    ["result"],
    [{ result: "ok" }, { result: "error" }],
  );

  readonly dnsLookups = new Counter(
    "certkeeper_dns_lookups_total",
    "DNS questions this process sent for CAA, TLSA, TXT (MTA-STS) and CNAME records, by record type and outcome: ok (an answer, " +
      "records or none), nxdomain, error (the resolver failed, refused or answered garbage) or timeout. Each step of a CAA climb " +
      "or a CNAME chain is one question.",
    ["type", "result"],
    ["CAA", "TLSA", "TXT", "CNAME"].flatMap((type) => ["ok", "nxdomain", "error", "timeout"].map((result) => ({ type, result }))),
  );

  readonly ctEntries = new Counter(
    "certkeeper_ct_entries_total",
    "Certificate Transparency log entries this process read, verified against the log's signed head and matched " +
      "against every watch (CERTKEEPER_CT_SOURCE=logs), by log URL.",
    ["log"],
  );

  observeCtPoll(result: "ok" | "failed" | "rate_limited"): void {
    this.ctPolls.inc({ result });
  }

  observeCheck(result: { ok: boolean; seconds: number }): void {
    this.checks.inc({ result: result.ok ? "ok" : "failed" });
    this.checkDuration.observe(result.seconds);
  }

  observeDelivery(result: { type: ChannelType; delivered: boolean }): void {
    this.deliveries.inc({ type: result.type, result: result.delivered ? "delivered" : "failed" });
  }
}

export interface ScrapeOptions {
  store: Store;
  metrics: ServiceMetrics;
  /** The time statuses and days until expiry are computed at (ms since the epoch). */
  now: number;
  /** Certificates per store page; default 500. */
  pageSize?: number;
  /** CERTKEEPER_CT_SOURCE is `logs`: the logs' backlogs are shown (with the search source, none is followed). */
  followsLogs?: boolean;
}

/**
 * The whole exposition, in chunks: the process's own metrics first, then the store's. Each metric
 * family is written as one group, as the format requires, so the certificates are paged through twice.
 */
export async function* scrapeMetrics(options: ScrapeOptions): AsyncGenerator<string> {
  const { store, metrics, now } = options;
  const pageSize = options.pageSize ?? PAGE_SIZE;
  // The database first, before the first chunk: one that is down fails the scrape before anything is sent.
  const pending = await store.events.countPending();
  yield processMetrics(metrics);
  yield (
    metrics.checks.render() +
    metrics.checkDuration.render() +
    metrics.deliveries.render() +
    metrics.ctPolls.render() +
    metrics.ctEntries.render() +
    metrics.revocationRequests.render() +
    metrics.ariRequests.render() +
    metrics.dnsLookups.render()
  );

  let backlog = familyHeader(
    "certkeeper_ct_backlog_entries",
    "gauge",
    "Entries of each followed CT log not read yet: the size of its newest verified head minus the follower's position.",
  );
  for (const log of options.followsLogs ? await store.ctLogs.list() : []) {
    if (log.listed && log.treeSize !== null && log.position !== null) backlog += sampleLine("certkeeper_ct_backlog_entries", { log: log.url }, Math.max(0, log.treeSize - log.position));
  }
  yield backlog;

  yield familyHeader(
    "certkeeper_deliveries_pending",
    "gauge",
    "Notification deliveries waiting for their first attempt or a retry, in the whole database.",
  ) + sampleLine("certkeeper_deliveries_pending", {}, pending);

  const byStatus = new Map<CertificateStatus, number>(CERTIFICATE_STATUSES.map((status) => [status, 0]));
  const family = (name: string, help: string, samples: (record: CertificateRecord) => string) =>
    certificateFamily({ store, pageSize, name, help, samples });

  yield* family(
    "certkeeper_certificate_expiry_timestamp_seconds",
    "When each monitored certificate expires (notAfter of the certificate last retrieved), in Unix seconds.",
    (record) => {
      const { status } = certificateStatus(record, now);
      byStatus.set(status, byStatus.get(status)! + 1);
      return sampleLine("certkeeper_certificate_expiry_timestamp_seconds", seriesLabels(record, status), record.details.notAfter / 1000);
    },
  );

  yield* family(
    "certkeeper_certificate_days_until_expiry",
    "Whole days until each monitored certificate expires, as the API's daysUntilExpiry: floor((notAfter - now) / 24 h) " +
      "at scrape time, negative once expired.",
    (record) => {
      const { status, daysUntilExpiry } = certificateStatus(record, now);
      return sampleLine("certkeeper_certificate_days_until_expiry", seriesLabels(record, status), daysUntilExpiry);
    },
  );

  yield* family(
    "certkeeper_certificate_revocation_status",
    "Always 1, one series per monitored certificate: the label revocation tells what OCSP or the CRL last said " +
      "(good, revoked, unknown, unavailable, not_checked).",
    (record) => {
      const { status } = certificateStatus(record, now);
      const revocation = record.details.revocation?.status ?? "not_checked";
      return sampleLine("certkeeper_certificate_revocation_status", { ...seriesLabels(record, status), revocation }, 1);
    },
  );

  yield* family(
    "certkeeper_endpoint_expiry_timestamp_seconds",
    "When the certificate each address behind a monitored name served at the last check expires, in Unix seconds " +
      "(one series per address that gave a certificate): a node still serving an old certificate shows here.",
    (record) => {
      let text = "";
      for (const endpoint of record.endpoints ?? []) {
        if (!endpoint.details) continue;
        const { status } = endpointStatus(endpoint, record, now);
        text += sampleLine(
          "certkeeper_endpoint_expiry_timestamp_seconds",
          { ...seriesLabels(record, status), protocol: record.protocol ?? "tls", address: endpoint.address },
          endpoint.details.notAfter / 1000,
        );
      }
      return text;
    },
  );

  yield* family(
    "certkeeper_certificate_renewal_deadline_timestamp_seconds",
    "When each monitored certificate should have been renewed (its renewal deadline), in Unix seconds: the end of the " +
      "CA's suggested renewal window (source ari) when known, else three quarters of its lifetime, two thirds under 10 days (source lifetime).",
    (record) => {
      const { status } = certificateStatus(record, now);
      const { deadline, source } = renewalDeadline(record.details);
      return sampleLine("certkeeper_certificate_renewal_deadline_timestamp_seconds", { ...seriesLabels(record, status), source }, deadline / 1000);
    },
  );

  yield* family(
    "certkeeper_certificate_chain_expiry_timestamp_seconds",
    "When the first certificate above each monitored leaf on its trusted path (intermediates and the anchoring root) " +
      "expires, in Unix seconds; no series without a trusted path.",
    (record) => {
      const above = record.details.chainExpiry;
      if (!above) return "";
      return sampleLine("certkeeper_certificate_chain_expiry_timestamp_seconds", seriesLabels(record, certificateStatus(record, now).status), above.notAfter / 1000);
    },
  );

  let counts = familyHeader("certkeeper_certificates", "gauge", "Monitored certificates by status, over every organization and mode.");
  for (const [status, count] of byStatus) counts += sampleLine("certkeeper_certificates", { status }, count);
  yield counts;
}

function processMetrics(metrics: ServiceMetrics): string {
  const versions = process.versions as Record<string, string | undefined>;
  const runtime = versions.bun ? `bun ${versions.bun}` : `node ${versions.node}`;
  return (
    familyHeader("certkeeper_build_info", "gauge", "Always 1; the labels tell the certkeeper version and the runtime.") +
    sampleLine("certkeeper_build_info", { version: packageJson.version, runtime }, 1) +
    familyHeader("process_start_time_seconds", "gauge", "Start time of the process since the Unix epoch, in seconds.") +
    sampleLine("process_start_time_seconds", {}, Math.floor(metrics.startedAt / 1000)) +
    familyHeader("process_resident_memory_bytes", "gauge", "Resident memory size of the process, in bytes.") +
    sampleLine("process_resident_memory_bytes", {}, process.memoryUsage.rss())
  );
}

/**
 * The labels of a per-certificate series: who owns it, where it is, which certificate it is, its
 * status now. Never a secret. `certificate_id` makes every certificate's series its own: two
 * certificates of one domain and port that differ only by protocol or connectTo would otherwise share
 * a label set, and Prometheus would keep one of their samples and drop the other.
 */
function seriesLabels(
  record: { id: string; organizationId: string; mode: Mode; domain: string; port: number },
  status: CertificateStatus,
) {
  return { organization: record.organizationId, mode: record.mode, domain: record.domain, port: record.port, certificate_id: record.id, status };
}

/** One gauge family with its samples for every certificate, rendered a page of the store at a time. */
async function* certificateFamily(options: {
  store: Store;
  pageSize: number;
  name: string;
  help: string;
  samples: (record: CertificateRecord) => string;
}): AsyncGenerator<string> {
  yield familyHeader(options.name, "gauge", options.help);
  for await (const page of certificatePages(options.store, options.pageSize)) {
    let text = "";
    for (const record of page) text += options.samples(record);
    yield text;
  }
}

async function* certificatePages(store: Store, limit: number) {
  let afterId: string | undefined;
  for (;;) {
    const page = await store.certificates.listAll({ limit, afterId });
    if (page.length > 0) yield page;
    if (page.length < limit) return;
    afterId = page.at(-1)!.id;
  }
}
