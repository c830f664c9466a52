/**
 * An in-process certkeeper for tests: a store (memory or libSQL), core with test-friendly config
 * (private targets allowed, *.certkeeper.test resolving to 127.0.0.1, the test root trusted), the
 * Elysia app driven by `app.handle(new Request(…))`, and keys of every role.
 */
import { expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG, type Config } from "../../core/config/config.ts";
import { createCore, type Core, type CoreOptions } from "../../core/app/create_core.ts";
import { silentLogger } from "../../core/base/log.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import type { Store } from "../../core/store/ports.ts";
import type { Limits, Mode, Role } from "../../core/base/records.ts";
import { createMemoryStore } from "../../adapters/memory/mod.ts";
import { openLibsqlStore } from "../../adapters/libsql/mod.ts";
import { createHttpApp } from "../../adapters/elysia/mod.ts";
import { createTransports } from "../../adapters/notify/mod.ts";
import { createIntermediateCa, createRootCa, type Issued } from "./pki.ts";
import { openApiCheckerFor, type OpenApiChecker } from "./openapi_check.ts";

export const TEST_DOMAIN = "certkeeper.test";

export interface TestPki {
  root: Issued;
  /** RSA intermediate: its leaves are signed sha256WithRSAEncryption. */
  rsaIntermediate: Issued;
  /** ECDSA intermediate: its leaves are signed ecdsa-with-SHA256. */
  ecIntermediate: Issued;
  /** A root nobody trusts. */
  strangerRoot: Issued;
}

let pki: Promise<TestPki> | undefined;

/** One local PKI per test process. */
export function testPki(): Promise<TestPki> {
  pki ??= (async () => {
    const root = await createRootCa({ keyType: "rsa", name: "CN=certkeeper Test Root CA, O=certkeeper tests" });
    return {
      root,
      rsaIntermediate: await createIntermediateCa(root, { keyType: "rsa", name: "CN=certkeeper Test RSA CA, O=certkeeper intermediates" }),
      ecIntermediate: await createIntermediateCa(root, { keyType: "ec", name: "CN=certkeeper Test EC CA, O=certkeeper intermediates" }),
      strangerRoot: await createRootCa({ name: "CN=Stranger Root CA, O=Nobody trusts me" }),
    };
  })();
  return pki;
}

export type StoreKind = "memory" | "libsql";

export interface HarnessOptions extends Partial<Omit<CoreOptions, "config" | "store">> {
  store?: StoreKind | Store;
  config?: Partial<Config>;
  limits?: Partial<Limits>;
}

export interface TestKey {
  key: string;
  id: string;
  userId: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  body: any;
}

/** The OpenAPI checker of the document served for an operation list, by whether /metrics is on. */
const servedDocuments = new WeakMap<readonly unknown[], Map<string, OpenApiChecker>>();

export async function createHarness(options: HarnessOptions = {}) {
  const { root } = await testPki();
  let dir: string | undefined;
  let store: Store;
  if (typeof options.store === "object") {
    store = options.store;
  } else if (options.store === "libsql") {
    dir = mkdtempSync(join(tmpdir(), "certkeeper-test-"));
    store = await openLibsqlStore({ url: `file:${join(dir, "test.db")}` });
  } else {
    store = createMemoryStore();
  }
  const config: Config = {
    ...DEFAULT_CONFIG,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 2000,
    logLevel: "error",
    // Part I and II's rules, which most route tests assert, are the `days` policy's; the renewal
    // policy's tests (renewal*.test.ts) set it.
    alertPolicy: "days",
    ...options.config,
  };
  const core: Core = createCore({ logger: silentLogger, trust: new TrustStore([root.certPem]), ...options, config, store });
  const app = createHttpApp(core);
  const admin = core.services.admin;
  const org = await admin.createOrganization({ name: "Acme", plan: "enterprise", limits: options.limits });

  async function makeKey(role: Role, mode: Mode = "live", organizationId = org.id): Promise<TestKey> {
    const user = await admin.createUser({ organizationId, email: `${role}-${crypto.randomUUID()}@acme.test`, role });
    const { record, key } = await admin.createApiKey({ userId: user.id, name: `${role} key`, mode });
    return { key, id: record.id, userId: user.id };
  }

  const keys = {
    owner: await makeKey("owner"),
    admin: await makeKey("admin"),
    member: await makeKey("member"),
    test: await makeKey("owner", "test"),
  };

  // Every response a test sees is checked against the OpenAPI document the app serves. Apps of the
  // same operations, with /metrics or without, serve the same document: it is fetched (built: about
  // 30 ms of CPU) by the first harness of each kind in this process, and its checker shared.
  const documentKind = `${config.metricsToken !== undefined}`;
  let openApi: OpenApiChecker | undefined;
  async function openApiChecker(): Promise<OpenApiChecker> {
    if (openApi) return openApi;
    const kinds = servedDocuments.get(core.operations) ?? new Map<string, OpenApiChecker>();
    servedDocuments.set(core.operations, kinds);
    openApi = kinds.get(documentKind);
    if (!openApi) {
      openApi = openApiCheckerFor(await (await app.handle(new Request("http://localhost/v1/openapi.json"))).text());
      kinds.set(documentKind, openApi);
    }
    return openApi;
  }

  async function request(
    method: string,
    path: string,
    init: { key?: string | null; body?: unknown; headers?: Record<string, string>; rawBody?: BodyInit } = {},
  ): Promise<TestResponse> {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? keys.owner.key : init.key;
    if (key !== null) headers.authorization ??= `Bearer ${key}`;
    let body: BodyInit | undefined = init.rawBody;
    if (init.body !== undefined) {
      body = JSON.stringify(init.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {}
    (await openApiChecker()).assert({ method, path, status: response.status, headers: response.headers, body: parsed });
    return { status: response.status, headers: response.headers, body: parsed };
  }

  return {
    core,
    app,
    store,
    org,
    keys,
    makeKey,
    request,
    config,
    /** The folder of the libSQL database file (store: "libsql"), for tests that inspect it. */
    dir,
    async close() {
      await core.stop();
      await store.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export type Harness = Awaited<ReturnType<typeof createHarness>>;

/** Asserts a whole failure envelope: the status, the code, a message, nothing else; and X-Request-Id. */
export function expectError(response: TestResponse, status: number, code: string): void {
  expect({ status: response.status, body: response.body }).toEqual({
    status,
    body: { error: { code, message: expect.any(String) } },
  });
  expect(response.body.error.message.length).toBeGreaterThan(10);
  expect(response.headers.get("x-request-id")).toMatch(/^req_[0-9A-Za-z]{16,}$/);
}

/** Asserts a success envelope and returns its data. */
export function expectData(response: TestResponse, status: number): any {
  expect(response.status).toBe(status);
  const requestId = response.headers.get("x-request-id");
  expect(requestId).toMatch(/^req_[0-9A-Za-z]{16,}$/);
  expect(response.body.meta.requestId).toBe(requestId!);
  expect(Object.keys(response.body).sort()).toEqual(["data", "meta"]);
  return response.body.data;
}

/**
 * Notification transports that reach the test's own servers: the test PKI's root trusted, private
 * addresses allowed, names under the test domain on 127.0.0.1, emails to an outbox folder; `config`
 * adds to that.
 */
export async function loopbackTransports(config: Partial<Config> = {}): Promise<ReturnType<typeof createTransports>> {
  const { root } = await testPki();
  const full = { ...DEFAULT_CONFIG, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], ...config };
  return createTransports(full, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
}
