/**
 * For tests that kill a server at an exact moment: a database with an owner key, a webhook receiver
 * that can kill the server once it answered a request, and API calls to a served process.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Admin } from "../../core/accounts/admin.ts";
import { systemClock } from "../../core/base/time.ts";
import { openLibsqlStore } from "../../adapters/libsql/mod.ts";
import { testPki, TEST_DOMAIN } from "./harness.ts";
import type { ServeProcess } from "./cli.ts";

export interface Arrival {
  n: number;
  webhookId: string;
  eventId: string;
  type: string;
  certificateId: string | null;
  serial: string | null;
  arrivedAt: number;
  answeredAt: number | null;
  /** Which server generation (incremented by the test at each restart) sent it. */
  generation: number;
}

/**
 * A webhook receiver on 127.0.0.1. `onArrival(arrival)` runs before the answer: it may return
 * "hold" to never answer (the test kills the server meanwhile).
 */
export async function startKillReceiver() {
  const arrivals: Arrival[] = [];
  const state = {
    generation: 0,
    onArrival: (_: Arrival): "answer" | "hold" => "answer",
    afterAnswer: (_: Arrival): void => {},
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      let json: any = {};
      try {
        json = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {}
      const arrival: Arrival = {
        n: arrivals.length,
        webhookId: String(req.headers["webhook-id"]),
        eventId: String(json?.id),
        type: String(json?.type),
        certificateId: json?.data?.certificate?.id ?? null,
        serial: json?.data?.certificate?.serialNumber ?? null,
        arrivedAt: Date.now(),
        answeredAt: null,
        generation: state.generation,
      };
      arrivals.push(arrival);
      if (state.onArrival(arrival) === "hold") return;
      res.writeHead(200).end("ok", () => {
        arrival.answeredAt = Date.now();
        state.afterAnswer(arrival);
      });
    });
    res.on("error", () => {});
  });
  server.keepAliveTimeout = 60_000;
  const sockets = new Set<import("node:net").Socket>();
  server.on("connection", (s) => (sockets.add(s), s.on("close", () => sockets.delete(s))));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    state,
    close: () => new Promise<void>((resolve) => (sockets.forEach((s) => s.destroy()), server.close(() => resolve()))),
  };
}

export type KillReceiver = Awaited<ReturnType<typeof startKillReceiver>>;

/** The environment of a server on `databaseUrl` watching *.certkeeper.test on 127.0.0.1 with the test root trusted. */
export async function crashEnv(dir: string, databaseUrl: string, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const { root } = await testPki();
  const caFile = join(dir, "root.pem");
  writeFileSync(caFile, root.certPem);
  return {
    CERTKEEPER_DATABASE_URL: databaseUrl,
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_RESOLVE: `*.${TEST_DOMAIN}=127.0.0.1`,
    CERTKEEPER_EXTRA_CA_FILE: caFile,
    CERTKEEPER_REVOCATION: "off",
    CERTKEEPER_ARI: "off",
    CERTKEEPER_DNS_SERVERS: "off",
    CERTKEEPER_LOG_FORMAT: "json",
    ...extra,
  };
}

/** An organization, an owner and a live key in the database at `databaseUrl`. */
export async function ownerKey(databaseUrl: string, plan: "pro" | "enterprise" = "enterprise"): Promise<string> {
  const store = await openLibsqlStore({ url: databaseUrl });
  try {
    const admin = new Admin(store, systemClock);
    const org = await admin.createOrganization({ name: `Crash ${crypto.randomUUID()}`, plan });
    const user = await admin.createUser({ organizationId: org.id, email: `${crypto.randomUUID()}@acme.test`, role: "owner" });
    return (await admin.createApiKey({ userId: user.id, name: "crash", mode: "live" })).key;
  } finally {
    await store.close();
  }
}

export async function api(server: ServeProcess, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: response.status, body: parsed };
}

/** Every page of a cursor-paginated list. */
export async function listAll(server: ServeProcess, key: string, path: string): Promise<any[]> {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const page = await api(server, key, "GET", `${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
    if (page.status !== 200) throw new Error(`GET ${path} answered ${page.status} ${JSON.stringify(page.body).slice(0, 300)}`);
    all.push(...page.body.data);
    cursor = page.body.meta.nextCursor;
  } while (cursor);
  return all;
}
