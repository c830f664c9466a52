/**
 * A light, paced load: `rate` requests a second, each sent at its scheduled time whatever the answers
 * before it (so a stalled server is not given time to recover: latency counts from the scheduled
 * send), rotating over `paths`. What a person at a dashboard or a monitoring script sees, rather than
 * the saturation wrk measures.
 */
export interface PacedResult {
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
}

export async function pacedLoad(options: { base: string; paths: string[]; headers: Record<string, string>; rate: number; seconds: number }): Promise<PacedResult> {
  const total = Math.max(1, Math.round(options.rate * options.seconds));
  const start = performance.now() + 50;
  const latencies: number[] = [];
  let errors = 0;
  const inFlight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const scheduled = start + (i * 1000) / options.rate;
    // Bun.sleep may wake a little early: a request is never sent before its time (nor timed from it).
    for (let wait = scheduled - performance.now(); wait > 0; wait = scheduled - performance.now()) await Bun.sleep(wait);
    const path = options.paths[i % options.paths.length]!;
    inFlight.push(
      fetch(`${options.base}${path}`, { headers: options.headers })
        .then(async (response) => {
          await response.arrayBuffer();
          if (response.status !== 200) errors++;
          latencies.push(performance.now() - scheduled);
        })
        .catch(() => {
          errors++;
        }),
    );
  }
  await Promise.all(inFlight);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { requests: latencies.length, errors, p50Ms: at(0.5), p99Ms: at(0.99) };
}
