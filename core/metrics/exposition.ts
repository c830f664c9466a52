/**
 * The Prometheus text exposition format (version 0.0.4) and the two instruments certkeeper keeps in
 * memory: counters and a histogram. Written here rather than taken from prom-client: its registry holds
 * every series in memory until the text is rendered as one string, while certkeeper renders per-certificate
 * gauges page by page from the store, and its default collectors and cluster support are Node-specific.
 *
 * @example
 * const checks = new Counter("certkeeper_checks_total", "Checks made.", ["result"]);
 * checks.inc({ result: "ok" });
 * checks.render(); // "# HELP certkeeper_checks_total Checks made.\n# TYPE …\ncertkeeper_checks_total{result=\"ok\"} 1\n"
 */

export const METRICS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

export type Labels = Record<string, string | number>;
export type MetricType = "counter" | "gauge" | "histogram";

/** A label value as the format wants it: backslash, double quote and line feed escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** HELP text escapes backslash and line feed only. */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value: Go's float syntax, with the format's spellings of infinity and NaN. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

/** The `# HELP` and `# TYPE` lines that open a metric family. */
export function familyHeader(name: string, type: MetricType, help: string): string {
  return `# HELP ${name} ${escapeHelp(help)}\n# TYPE ${name} ${type}\n`;
}

/** One sample line: `name{label="value",…} value`. */
export function sampleLine(name: string, labels: Labels, value: number): string {
  const pairs = Object.entries(labels).map(([label, v]) => `${label}="${escapeLabelValue(String(v))}"`);
  return `${name}${pairs.length > 0 ? `{${pairs.join(",")}}` : ""} ${formatValue(value)}\n`;
}

/** A monotonically increasing count per label set; the label sets given up front start at 0. */
export class Counter {
  readonly #series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    initial: readonly Labels[] = [],
  ) {
    for (const labels of initial) this.inc(labels, 0);
  }

  inc(labels: Labels, by = 1): void {
    const key = this.#key(labels);
    const series = this.#series.get(key);
    if (series) series.value += by;
    else this.#series.set(key, { labels: Object.fromEntries(this.labelNames.map((name) => [name, labels[name] ?? ""])), value: by });
  }

  /** The current value for `labels` (0 when never counted). */
  value(labels: Labels): number {
    return this.#series.get(this.#key(labels))?.value ?? 0;
  }

  /** The series' key: its label values in the counter's order, each quoted (counted once per check: no arrays). */
  #key(labels: Labels): string {
    let key = "";
    for (const name of this.labelNames) key += `${JSON.stringify(String(labels[name] ?? ""))},`;
    return key;
  }

  render(): string {
    let text = familyHeader(this.name, "counter", this.help);
    for (const { labels, value } of this.#series.values()) text += sampleLine(this.name, labels, value);
    return text;
  }
}

/** 1, 2.5 and 5 per decade from `from` to `to` seconds: 0.001, 0.0025, 0.005, 0.01, …, 10. */
export function decadeBuckets(from: number, to: number): number[] {
  const buckets: number[] = [];
  for (let decade = Math.round(Math.log10(from)); ; decade++) {
    for (const step of [1, 2.5, 5]) {
      // toPrecision strips binary noise: 2.5e-3, not 0.0025000000000000005.
      const bound = Number((step * 10 ** decade).toPrecision(3));
      if (bound > to) return buckets;
      if (bound >= from) buckets.push(bound);
    }
  }
}

/** A histogram without labels: cumulative `_bucket{le}` counts, `_sum` and `_count`. */
export class Histogram {
  readonly #counts: number[];
  #sum = 0;
  #count = 0;

  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {
    this.#counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index !== -1) this.#counts[index]!++;
    this.#sum += value;
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  render(): string {
    let text = familyHeader(this.name, "histogram", this.help);
    let cumulative = 0;
    this.buckets.forEach((bound, i) => {
      cumulative += this.#counts[i]!;
      text += sampleLine(`${this.name}_bucket`, { le: formatValue(bound) }, cumulative);
    });
    text += sampleLine(`${this.name}_bucket`, { le: "+Inf" }, this.#count);
    text += sampleLine(`${this.name}_sum`, {}, this.#sum);
    text += sampleLine(`${this.name}_count`, {}, this.#count);
    return text;
  }
}
