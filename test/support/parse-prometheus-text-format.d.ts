/** Types of parse-prometheus-text-format (it ships none): prom2json's shape, values as strings. */
declare module "parse-prometheus-text-format" {
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
    /** Histograms: cumulative counts by `le`. */
    buckets?: Record<string, string>;
    count?: string;
    sum?: string;
    timestamp_ms?: string;
  }
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
