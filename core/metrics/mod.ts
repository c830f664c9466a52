/** GET /metrics: Prometheus exposition of the store's certificates and this process's counters. */
export { metricsResponse } from "./endpoint.ts";
export { METRICS_CONTENT_TYPE } from "./exposition.ts";
export { scrapeMetrics, ServiceMetrics, type ScrapeOptions } from "./scrape.ts";
