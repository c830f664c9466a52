/**
 * /metrics with Part III activity (CONTRACT §10, §18, §19, §21): a real in-process certkeeper
 * (test/support/ct_world.ts: HTTP app, real transports over loopback) following two fixture CT logs
 * (CERTKEEPER_CT_SOURCE=logs), one of them listed under a hostile URL (a double quote and a backslash),
 * asking a fixture ACME ARI server that fails for some leaves and asks early renewal for another, with
 * certificates whose renewal is overdue, requested, and not due. The scraped text is judged by Debian's
 * promtool (`promtool check metrics`) and read sample by sample. Skipped, saying so, without promtool.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { rewriteList, startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { startAriServer, certIdOf, type AriServer } from "./support/ari_server.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { expectData, testPki } from "./support/harness.ts";

setDefaultTimeout(60_000);
const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((path) => existsSync(path)) ?? Bun.which("promtool");
const TOKEN = "metrics-part3-t0ken";
let world: CtWorld;
let ari: AriServer;
const servers: TlsTestServer[] = [];
let hostileUrl = "";

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  ari = await startAriServer({ tlsIssuer: rsaIntermediate });
  world = await startCtWorld({
    start: false,
    config: { metricsToken: TOKEN, alertPolicy: "renewal", acmeDirectories: [{ issuer: "certkeeper Test RSA CA", url: ari.directoryUrl }] } as never,
  });
  // The operator's log list names the RFC 6962 log under a URL with a double quote and a backslash in its path.
  const log = world.logs[0]!;
  hostileUrl = log.url.replace(/\/logs\/argon\/$/, '/lo"gs\\argon/');
  log.url = hostileUrl;
  rewriteList(world, world.logs);
  world.start();
  const h = world.harness;
  const now = Date.now();
  const serve = async (nb: number, na: number, name: string) => {
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [name], notBefore: new Date(nb), notAfter: new Date(na) });
    const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    servers.push(server);
    return { leaf, port: server.port };
  };
  const overdue = await serve(now - 80 * DAY, now + 10 * DAY, "overdue.certkeeper.test");
  const requested = await serve(now - 10 * DAY, now + 80 * DAY, "requested.certkeeper.test");
  ari.answer(certIdOf(requested.leaf), { kind: "window", start: now - DAY, end: now + DAY });
  const fine = await serve(now - 10 * DAY, now + 80 * DAY, "fine.certkeeper.test");
  for (const [domain, served] of [["overdue.certkeeper.test", overdue], ["requested.certkeeper.test", requested], ["fine.certkeeper.test", fine]] as const) {
    expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: served.port } }), 201);
  }
  await world.caughtUp();
  await world.addWatch({ domain: "certkeeper.test", includeSubdomains: true });
  await world.issue({ dnsNames: ["fine.certkeeper.test"] });
  await world.issue({ dnsNames: ["other.certkeeper.test"] });
  world.publishAll();
  await world.caughtUp(2);
});

afterAll(async () => {
  await world?.close();
  await ari?.close();
  for (const server of servers) await server.close();
});

async function scrape(): Promise<string> {
  const response = await world.harness.request("GET", "/metrics", { key: null, headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  return response.body as string;
}

/** Unescapes a label value as the text format defines it. */
const unescape = (value: string) => value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));

function samples(text: string, name: string): Array<{ labels: Record<string, string>; value: number }> {
  return text
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `))
    .map((line) => {
      const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line)!;
      const labels = Object.fromEntries([...(match[1] ?? "").matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1]!, unescape(m[2]!)]));
      return { labels, value: Number(match[2]) };
    });
}

// §10: "GET /metrics ...: Prometheus text format" — the whole scrape, hostile log URL label included,
// must parse. The one lint promtool gives for the contract-mandated name
// certkeeper_certificate_days_until_expiry ("use base unit seconds instead of days") is the contract's
// choice and is set aside; anything else (a parse error, a counter without _total, …) fails.
test.skipIf(!PROMTOOL)("promtool check metrics accepts the Part III scrape, a hostile CT log URL included", async () => {
  const text = await scrape();
  const child = Bun.spawn([PROMTOOL!, "check", "metrics"], { stdin: new TextEncoder().encode(text), stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  const problems = `${out}${err}`
    .split("\n")
    .filter((line) => line.trim() !== "" && !/^certkeeper_certificate_days_until_expiry use base unit "seconds" instead of "days"$/.test(line.trim()));
  expect(problems).toEqual([]);
});
if (!PROMTOOL) test.skip("promtool check metrics: SKIPPED, no promtool on this machine (Debian package prometheus)", () => {});

// §21: "Metrics: `certkeeper_ct_entries_total{log}`, `certkeeper_ct_backlog_entries{log}` (tree size − position)."
test("certkeeper_ct_entries_total{log} counts every entry read per log, and the backlog is tree size − position, by the log's URL", async () => {
  const text = await scrape();
  const logs = await world.ctLogs();
  const urls = logs.map((log: any) => log.url).sort();
  // The list's URL is normalized (the quote percent-encoded, the backslash a slash): one label value per log.
  expect(urls).toContain(new URL(hostileUrl).href);
  const entries = samples(text, "certkeeper_ct_entries_total");
  expect(Object.fromEntries(entries.map((s) => [s.labels.log, s.value]))).toEqual(Object.fromEntries(urls.map((url: string) => [url, 2])));
  const backlog = samples(text, "certkeeper_ct_backlog_entries");
  expect(Object.fromEntries(backlog.map((s) => [s.labels.log, s.value]))).toEqual(
    Object.fromEntries(logs.map((log: any) => [log.url, log.treeSize - log.position])),
  );
});

// §19: "ARI errors never change a status ... Metrics: `certkeeper_ari_requests_total{result}` (`ok`, `error`)."
// §19: requested → "status `expiring` with `statusReason: "renewal_requested"`"; §18: overdue → "status becomes `expiring`";
// §18: "Metrics: `certkeeper_certificate_renewal_deadline_timestamp_seconds` (the expiry series' labels plus `source`)."
test("ARI outcomes are counted and per-certificate series carry the renewal status and source", async () => {
  const text = await scrape();
  const ariRequests = Object.fromEntries(samples(text, "certkeeper_ari_requests_total").map((s) => [s.labels.result, s.value]));
  expect(ariRequests.ok).toBeGreaterThanOrEqual(1);
  expect(ariRequests.error).toBeGreaterThanOrEqual(2);
  const list = expectData(await world.harness.request("GET", "/v1/certificates"), 200);
  const deadlines = samples(text, "certkeeper_certificate_renewal_deadline_timestamp_seconds");
  for (const certificate of list) {
    const series = deadlines.filter((s) => s.labels.certificate_id === certificate.id);
    expect(series.map((s) => ({ status: s.labels.status, source: s.labels.source, deadline: s.value * 1000 }))).toEqual([
      { status: certificate.status, source: certificate.renewal.source, deadline: Date.parse(certificate.renewal.deadline) },
    ]);
  }
  expect(Object.fromEntries(list.map((c: any) => [c.domain, c.status]))).toEqual({
    "overdue.certkeeper.test": "expiring",
    "requested.certkeeper.test": "expiring",
    "fine.certkeeper.test": "valid",
  });
});
