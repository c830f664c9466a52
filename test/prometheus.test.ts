/**
 * examples/prometheus (CONTRACT §23, issue 32): the alerting rules pass `promtool check rules` and
 * their unit tests pass `promtool test rules`; every query of the Grafana dashboard is PromQL that
 * promtool accepts and that finds data in the real /metrics output of a certkeeper with certificates,
 * channels and deliveries; and every metric the rules and the dashboard name is one certkeeper exports
 * (or one listed below as arriving with another part of Part III, whose queries are checked as PromQL
 * only, until it arrives). Uses Debian's promtool (package prometheus); skipped, saying so, without it.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver, type HttpReceiver } from "./support/receivers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { DEFAULT_CONFIG } from "../core/config/mod.ts";
import { TrustStore } from "../core/tls/mod.ts";

setDefaultTimeout(60_000);

const EXAMPLES = resolve(import.meta.dir, "../examples/prometheus");
const RULES = join(EXAMPLES, "certkeeper.rules.yml");
const RULE_TESTS = join(EXAMPLES, "certkeeper.rules.test.yml");
const DASHBOARD = join(EXAMPLES, "certkeeper.dashboard.json");
const PROMTOOL = ["/usr/bin/promtool", "/usr/local/bin/promtool"].find((path) => existsSync(path)) ?? Bun.which("promtool");

/**
 * Metrics the rules and dashboard use that other parts of Part III add (CONTRACT §21): until
 * certkeeper exports them, their queries are checked as PromQL only. When one appears in /metrics,
 * the test below fails until it is taken off this list, so its queries are checked for data too.
 */
const ARRIVING = new Set<string>([]);

/** Runs promtool; its exit code and output. */
async function promtool(args: string[], cwd = EXAMPLES) {
  const child = Bun.spawn([PROMTOOL!, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, output: `${stdout}${stderr}` };
}

/** certkeeper_… metric names in a PromQL expression (histogram suffixes folded into their family). */
function metricNames(expr: string): string[] {
  return [...new Set([...expr.matchAll(/\b(certkeeper_[a-z_]+)\b/g)].map((m) => m[1]!.replace(/_(bucket|sum|count)$/, "")))];
}

/** Every query of the dashboard, with Grafana's variables as "all" and a rate interval. */
function dashboardQueries(): Array<{ panel: string; expr: string }> {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, "utf8")) as { panels: Array<{ title: string; targets?: Array<{ expr: string }> }> };
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map((target) => ({
      panel: panel.title,
      expr: target.expr.replaceAll("$organization", ".*").replaceAll("$mode", ".*").replaceAll("$__rate_interval", "5m"),
    })),
  );
}

const quoted = (text: string) => `'${text.replaceAll("'", "''")}'`;

if (!PROMTOOL) {
  describe("examples/prometheus with promtool", () => {
    test.skip("skipped: promtool is not installed (Debian: apt-get install -y prometheus)", () => {});
  });
} else {
  describe("examples/prometheus with promtool", () => {
    let h: Harness;
    let transports: ReturnType<typeof createTransports>;
    let receiver: HttpReceiver;
    const servers: TlsTestServer[] = [];
    let exposition = "";
    let dir: string;

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), "certkeeper-promtool-"));
      const { root, rsaIntermediate } = await testPki();
      const config = { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }] };
      transports = createTransports(config, new TrustStore([root.certPem]), { outboxDir: join(dir, "outbox") });
      // Following the logs (the backlog metric is exported only then); the follower is not started: the log is written below.
      h = await createHarness({ store: "libsql", transports, config: { metricsToken: "promtool-t0ken", ctSource: "logs" } });
      receiver = await startHttpReceiver();
      // What a real installation shows: valid, expiring and expired certificates, two of one name and
      // port behind different addresses, a channel that has been sent something.
      for (const [name, days] of [["valid", 200], ["soon", 10], ["old", -2], ["lb", 60]] as const) {
        const domain = `${name}.prom.${TEST_DOMAIN}`;
        const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + days * DAY + 3_600_000), notBefore: new Date(Date.now() - 100 * DAY) });
        const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
        servers.push(server);
        expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
        if (name === "lb") expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, connectTo: "127.0.0.1" } }), 201);
      }
      // A CT log the follower reads (CERTKEEPER_CT_SOURCE=logs), 100 entries behind its newest head.
      const log = { url: "https://ct.prom.example/log/", kind: "tiled" as const };
      const at = Date.now();
      expect(await h.store.ctLogs.leaseFollower({ owner: "proc_promtool", now: at, leaseUntil: at + 60_000 })).toBe(true);
      expect(await h.store.ctLogs.setListed("proc_promtool", [log], at)).toBe(true);
      expect(await h.store.ctLogs.updateLog("proc_promtool", log.url, { treeSize: 1000, rootHash: "AAAA", headTimestamp: at, lastError: null, updatedAt: at })).toBe(true);
      expect(await h.store.ctLogs.startLog("proc_promtool", log.url, { position: 900, compactRange: [], updatedAt: at })).toBe(true);
      const channel = expectData(await h.request("POST", "/v1/channels", { body: { type: "webhook", name: "Hook", config: { url: `${receiver.url}/hook` } } }), 201);
      expectData(await h.request("POST", `/v1/channels/${channel.id}/test`), 200);
      const response = await h.request("GET", "/metrics", { key: null, headers: { authorization: "Bearer promtool-t0ken" } });
      expect(response.status).toBe(200);
      exposition = response.body as string;
    });

    afterAll(async () => {
      await h?.close();
      await transports?.close();
      await Promise.all([...servers.map((s) => s.close()), receiver?.close()]);
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    test("promtool check rules accepts the alerting rules", async () => {
      const result = await promtool(["check", "rules", RULES]);
      expect(result).toEqual({ code: 0, output: expect.stringContaining("SUCCESS: 9 rules found") });
    });

    test("promtool test rules passes their unit tests: each alert fires for its certificate and not for the others", async () => {
      const result = await promtool(["test", "rules", RULE_TESTS]);
      expect(result).toEqual({ code: 0, output: expect.stringContaining("SUCCESS") });
    });

    test("the rules and the dashboard name only metrics certkeeper exports (or ones arriving with Part III)", () => {
      const exported = new Set([...exposition.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!));
      const rules = readFileSync(RULES, "utf8");
      const used = new Set([...metricNames(rules), ...dashboardQueries().flatMap((q) => metricNames(q.expr))]);
      expect([...used].filter((name) => !exported.has(name) && !ARRIVING.has(name))).toEqual([]);
      // Arrived: take it off ARRIVING so its queries are checked for data like the others.
      expect([...ARRIVING].filter((name) => exported.has(name))).toEqual([]);
    });

    test("every dashboard query is PromQL promtool accepts, and finds data in the real /metrics output", async () => {
      const queries = dashboardQueries();
      expect(queries.length).toBeGreaterThan(15);
      // Each query as an alert that fires when it finds nothing (absent), over the scraped samples held
      // steady for 20 minutes; expecting no alert at minute 10 fails on every empty query.
      const rules = [
        "groups:",
        "  - name: dashboard",
        "    rules:",
        ...queries.flatMap((query, i) => [`      - alert: Query${i}FindsNothing`, `        expr: ${quoted(`absent(${query.expr})`)}`]),
      ].join("\n");
      writeFileSync(join(dir, "dashboard.rules.yml"), `${rules}\n`);
      const checked = await promtool(["check", "rules", "dashboard.rules.yml"], dir);
      expect({ code: checked.code, output: checked.output }).toEqual({ code: 0, output: expect.stringContaining(`SUCCESS: ${queries.length} rules found`) });

      const samples = exposition
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => {
          const at = line.lastIndexOf(" ");
          return { series: line.slice(0, at), value: line.slice(at + 1) };
        });
      expect(samples.length).toBeGreaterThan(50);
      const tests = [
        "rule_files: [dashboard.rules.yml]",
        "evaluation_interval: 1m",
        "tests:",
        "  - interval: 1m",
        "    input_series:",
        ...samples.flatMap(({ series, value }) => [`      - series: ${quoted(series)}`, `        values: ${quoted(`${value}+0x20`)}`]),
        "    alert_rule_test:",
        ...queries
          .map((query, i) => ({ query, i }))
          .filter(({ query }) => !metricNames(query.expr).some((name) => ARRIVING.has(name)))
          .flatMap(({ i }) => [`      - eval_time: 10m`, `        alertname: Query${i}FindsNothing`, `        exp_alerts: []`]),
      ].join("\n");
      writeFileSync(join(dir, "dashboard.test.yml"), `${tests}\n`);
      const result = await promtool(["test", "rules", "dashboard.test.yml"], dir);
      // On failure, promtool names the alert (QueryNFindsNothing): N is the query's index here.
      const named = queries.map((query, i) => `Query${i}: ${query.panel}: ${query.expr}`).join("\n");
      expect({ code: result.code, output: result.code === 0 ? "" : `${result.output}\n${named}` }).toEqual({ code: 0, output: "" });
    });

    test("the check catches a bad query: a misspelt metric finds nothing, a syntax error is refused", async () => {
      writeFileSync(join(dir, "bad.rules.yml"), `groups:\n  - name: bad\n    rules:\n      - alert: Broken\n        expr: 'sum(rate(certkeeper_checks_total[5m]'\n`);
      expect((await promtool(["check", "rules", "bad.rules.yml"], dir)).code).not.toBe(0);
      writeFileSync(join(dir, "typo.rules.yml"), `groups:\n  - name: typo\n    rules:\n      - alert: Typo\n        expr: 'absent(certkeeper_certificate_expiry_timestamp)'\n`);
      const series = exposition.split("\n").find((line) => line.startsWith("certkeeper_certificate_expiry_timestamp_seconds{"))!;
      writeFileSync(
        join(dir, "typo.test.yml"),
        `rule_files: [typo.rules.yml]\ntests:\n  - interval: 1m\n    input_series:\n      - series: ${quoted(series.slice(0, series.lastIndexOf(" ")))}\n        values: '1+0x20'\n    alert_rule_test:\n      - eval_time: 10m\n        alertname: Typo\n        exp_alerts: []\n`,
      );
      expect((await promtool(["test", "rules", "typo.test.yml"], dir)).code).not.toBe(0);
    });
  });
}
