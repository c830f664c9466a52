/**
 * One series per certificate (CONTRACT §23, issue 32): two certificates of one domain and port that
 * differ only by connectTo (a load balancer's two nodes) must not share a label set in any family, or
 * Prometheus keeps one sample and silently drops the other: the certificate closest to expiring could
 * be the one lost. Checked on the real /metrics output, every family, every sample.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const TOKEN = "series-m3trics-t0ken";
const DOMAIN = `lb.series.${TEST_DOMAIN}`;
let h: Harness;
const servers: TlsTestServer[] = [];
const ids: Record<string, string> = {};

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  h = await createHarness({ store: "libsql", config: { metricsToken: TOKEN } });
  // Two nodes behind one name and port: 127.0.0.1 serves a leaf 39 days from expiry, 127.0.0.2 one 364 days.
  const near = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], notAfter: new Date(Date.now() + 39 * DAY + 3_600_000) });
  const far = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN], notAfter: new Date(Date.now() + 364 * DAY + 3_600_000) });
  const first = await startTlsServer({ cert: chainPem(near, rsaIntermediate), key: near.keyPem, host: "127.0.0.1" });
  servers.push(first, await startTlsServer({ cert: chainPem(far, rsaIntermediate), key: far.keyPem, host: "127.0.0.2", port: first.port }));
  for (const [node, connectTo] of [["near", "127.0.0.1"], ["far", "127.0.0.2"]] as const) {
    const body = { domain: DOMAIN, port: first.port, connectTo, alertThresholds: [] };
    ids[node] = expectData(await h.request("POST", "/v1/certificates", { body }), 201).id;
  }
});

afterAll(async () => {
  await h?.close();
  await Promise.all(servers.map((server) => server.close()));
});

/** Every sample line of the exposition: its metric name and its label set as written. */
async function samples(): Promise<Array<{ name: string; labels: string; line: string }>> {
  const response = await h.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  return (response.body as string)
    .split("\n")
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? \S+$/.exec(line);
      if (!match) throw new Error(`not a sample line: ${line}`);
      // Label order is the writer's; sorted, two sets that differ only in order are the same series.
      const labels = [...(match[2] ?? "{}").slice(1, -1).matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((m) => `${m[1]}=${m[2]}`).sort().join(",");
      return { name: match[1]!, labels, line };
    });
}

test("/metrics never holds two samples with one label set, though two certificates differ only by connectTo", async () => {
  const lines = await samples();
  const seen = new Map<string, string>();
  const duplicates: string[] = [];
  for (const { name, labels, line } of lines) {
    const key = `${name}{${labels}}`;
    if (seen.has(key)) duplicates.push(`${seen.get(key)}\n  and ${line}`);
    seen.set(key, line);
  }
  expect(duplicates).toEqual([]);
});

test("each certificate has its own expiry series, told apart by certificate_id, with the value of its own leaf", async () => {
  const lines = await samples();
  for (const family of ["certkeeper_certificate_expiry_timestamp_seconds", "certkeeper_certificate_days_until_expiry", "certkeeper_certificate_revocation_status"]) {
    const ofDomain = lines.filter((s) => s.name === family && s.labels.includes(`domain=${DOMAIN}`));
    expect({ family, series: ofDomain.length }).toEqual({ family, series: 2 });
  }
  const days = (id: string) =>
    Number(lines.find((s) => s.name === "certkeeper_certificate_days_until_expiry" && s.labels.includes(`certificate_id=${id}`))!.line.split(" ").at(-1));
  expect({ near: days(ids.near!), far: days(ids.far!) }).toEqual({ near: 39, far: 364 });
});
