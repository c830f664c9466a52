/**
 * Every example runs with its one command, as its README says, against servers the test starts on
 * 127.0.0.1: a TLS server with a certificate from the test PKI, webhook receivers, `certkeeper serve`.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Webhook } from "standardwebhooks";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { startHttpReceiver } from "./support/receivers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { freePort, startServe, tempWorkspace, type ServeProcess } from "./support/cli.ts";
import { seedOwner } from "./support/accounts.ts";
import { generateSchema, SCHEMA_FILE } from "../examples/typed-client/generate.ts";

setDefaultTimeout(30_000);

const ROOT = resolve(import.meta.dir, "..");
const DOMAIN = `soon.${TEST_DOMAIN}`;

let workspace: ReturnType<typeof tempWorkspace>;
let tls: TlsTestServer;
/** What certkeeper needs to reach and trust the test TLS server (CONTRACT §1). */
let networkEnv: Record<string, string>;

beforeAll(async () => {
  const { root, rsaIntermediate } = await testPki();
  workspace = tempWorkspace("certkeeper-examples-");
  writeFileSync(join(workspace.dir, "ca.pem"), root.certPem);
  const leaf = await createLeaf({ dnsNames: [DOMAIN], daysLeft: 5.5, issuer: rsaIntermediate });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  networkEnv = {
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(workspace.dir, "ca.pem"),
    CERTKEEPER_LOG_LEVEL: "warn",
  };
});

afterAll(async () => {
  await tls?.close();
  workspace?.cleanup();
});

describe("package exports", () => {
  test("certkeeper, certkeeper/elysia and certkeeper/embed resolve by the package's own name, and nothing deeper", async () => {
    expect(Object.keys(await import("certkeeper"))).toEqual(expect.arrayContaining(["createCore", "configFromEnv", "OPERATIONS", "CertkeeperError"]));
    expect(Object.keys(await import("certkeeper/elysia"))).toEqual(expect.arrayContaining(["createHttpApp", "startServer"]));
    expect(Object.keys(await import("certkeeper/embed"))).toEqual(expect.arrayContaining(["createCertkeeper", "CertkeeperApiError"]));
    const deep = "certkeeper/core/app/create_core.ts";
    await expect(import(deep)).rejects.toThrow();
  });
});

describe("examples/embed", () => {
  test("monitors a certificate in-process, notifies a webhook channel, prints the status and the events", async () => {
    const receiver = await startHttpReceiver();
    try {
      const run = await runExample(["examples/embed/main.ts", `${DOMAIN}:${tls.port}`, `${receiver.url}/hook`], networkEnv);
      expect(run).toMatchObject({ code: 0, stderr: "" });
      expect(run.stdout).toMatch(/^subscribed webhook channel ch_\w+ to http:\/\/127\.0\.0\.1:\d+\/hook$/m);
      expect(run.stdout).toContain("test notification: delivered");
      expect(run.stdout).toContain(`certificate ${DOMAIN}:${tls.port}`);
      // 5.5 days left of a 35.5-day lifetime: past its renewal deadline (the default alert policy).
      expect(run.stdout).toContain("status: expiring (renewal_overdue)");
      expect(run.stdout).toMatch(/^ {2}certificate\.renewal_overdue: delivered$/m);
      expect(run.stdout).toMatch(/^ {2}test: delivered$/m);
      expect(receiver.requests.map((r) => r.json.type).sort()).toEqual(["certificate.renewal_overdue", "test"]);
      expect(receiver.requests.every((r) => r.headers["webhook-signature"]?.startsWith("v1,"))).toBe(true);
    } finally {
      await receiver.close();
    }
  });

  test("reports a refusal with the HTTP API's code and status", async () => {
    const run = await runExample(["examples/embed/main.ts", "https://example.com/"], networkEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/^certkeeper refused: invalid_domain \(400\): /);
  });
});

describe("examples/typed-client", () => {
  test("schema.d.ts is what generate.ts writes from the current OpenAPI document", async () => {
    const committed = readFileSync(SCHEMA_FILE, "utf8");
    if (committed !== (await generateSchema())) {
      throw new Error("examples/typed-client/schema.d.ts is out of date: run `bun examples/typed-client/generate.ts` and commit it.");
    }
  });
});

describe("against a running certkeeper server", () => {
  let server: ServeProcess;
  let apiKey: string;

  beforeAll(async () => {
    const env = { ...workspace.env };
    ({ key: apiKey } = await seedOwner(env.CERTKEEPER_DATABASE_URL!, { name: "Examples", email: "owner@examples.test" }));
    server = await startServe({ env: { ...env, ...networkEnv } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  test("examples/typed-client adds, lists, gets and deletes a certificate and handles typed errors", async () => {
    const run = await runExample(["examples/typed-client/main.ts", `${DOMAIN}:${tls.port}`], {
      CERTKEEPER_URL: server.url,
      CERTKEEPER_API_KEY: apiKey,
    });
    expect(run).toMatchObject({ code: 0, stderr: "" });
    expect(run.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(new RegExp(`^added cert_\\w+: ${DOMAIN}:${tls.port} is expiring, 5 days left$`)),
      `listed 1 certificate(s) matching "${DOMAIN}"; next cursor: null`,
      expect.stringMatching(/^got cert_\w+: issuer certkeeper intermediates, serial [0-9A-F:]+, reason renewal_overdue$/),
      expect.stringMatching(/^refused as expected \(400 invalid_domain\): /),
      expect.stringMatching(/^deleted cert_\w+: true$/),
      "gone: 404 certificate_not_found",
    ]);
  });

  test("examples/typed-client/generate.ts writes the same types from the running server's /v1/openapi.json", async () => {
    expect(await generateSchema(server.url)).toBe(readFileSync(SCHEMA_FILE, "utf8"));
  });

  test("examples/webhook-receiver accepts certkeeper's signed test notification and refuses forged ones", async () => {
    const port = await freePort();
    const channel = await api("POST", "/v1/channels", { type: "webhook", name: "Receiver", config: { url: `http://127.0.0.1:${port}/` } });
    const secret: string = channel.config.signingSecret;
    const receiver = spawnExample(["examples/webhook-receiver/server.ts"], { WEBHOOK_SECRET: secret, PORT: String(port) });
    try {
      await receiver.waitFor(/^listening on /m);

      const result = await api("POST", `/v1/channels/${channel.id}/test`);
      expect(result).toEqual({ eventId: expect.stringMatching(/^evt_/), channelId: channel.id, status: "delivered", responseStatus: 204, error: null });

      const body = JSON.stringify({ id: "evt_forged0000000000000", type: "certificate.expired", createdAt: new Date().toISOString(), data: {} });
      const post = (headers: Record<string, string>) =>
        fetch(`http://127.0.0.1:${port}/`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
      const now = new Date();
      const signedBy = (key: string, at: Date) => ({
        "webhook-id": "msg_forged",
        "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
        "webhook-signature": new Webhook(key).sign("msg_forged", at, body),
      });
      const forger = `whsec_${Buffer.from("not the channel's secret").toString("base64")}`;
      expect((await post(signedBy(forger, now))).status).toBe(401);
      expect((await post({ ...signedBy(secret, now), "webhook-id": "msg_other" })).status).toBe(401);
      expect((await post(signedBy(secret, new Date(now.getTime() - 10 * 60_000)))).status).toBe(401);
      expect((await post({})).status).toBe(401);

      await receiver.waitFor(/(refused: .*\n){4}/);
      const lines = receiver.stdout().trim().split("\n");
      expect(lines[1]).toBe(`accepted ${result.eventId} test`);
      expect(lines.slice(2)).toEqual([
        expect.stringMatching(/^refused: /),
        expect.stringMatching(/^refused: /),
        expect.stringMatching(/^refused: .*timestamp/i),
        expect.stringMatching(/^refused: /),
      ]);
    } finally {
      await receiver.stop();
    }
  });

  async function api(method: string, path: string, body?: unknown): Promise<any> {
    const response = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = (await response.json()) as any;
    if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
    return json.data;
  }
});

/** The parent's environment without CERTKEEPER_* (hermetic), plus `env`. */
function exampleEnv(env: Record<string, string>): Record<string, string> {
  const clean: Record<string, string> = { NO_COLOR: "1" };
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !name.startsWith("CERTKEEPER_")) clean[name] = value;
  }
  return { ...clean, ...env };
}

/** Runs `bun …args` from the repository root to its end, as the examples' READMEs say. */
async function runExample(args: string[], env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env: exampleEnv(env), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill("SIGKILL"), 25_000);
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/** Starts a long-running example; its output is collected as it comes. */
function spawnExample(args: string[], env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, ...args], { cwd: ROOT, env: exampleEnv(env), stdout: "pipe", stderr: "pipe" });
  let stdout = "";
  let stderr = "";
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of child.stdout) stdout += decoder.decode(chunk, { stream: true });
  })();
  void (async () => {
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  return {
    stdout: () => stdout,
    async waitFor(pattern: RegExp, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(stdout)) {
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`expected ${pattern} from ${args.join(" ")}\nstdout: ${stdout}\nstderr: ${stderr}`);
        }
        await Bun.sleep(25);
      }
    },
    async stop(): Promise<void> {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}
