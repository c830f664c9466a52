/**
 * certkeeper inside another TypeScript app: the API's operations as typed functions, without HTTP.
 * Same validation, same errors ({@link CertkeeperApiError}: the HTTP API's `code` and `status`), same
 * scheduler and notifications, started and stopped by the host.
 *
 * | embed call | HTTP |
 * |---|---|
 * | `certificates.add(input)` | `POST /v1/certificates` |
 * | `certificates.list(query?)` → `{ data, nextCursor }` | `GET /v1/certificates` |
 * | `certificates.get(id)`, `.update(id, patch)`, `.delete(id)`, `.check(id)` | `GET`, `PATCH`, `DELETE /v1/certificates/{id}`, `POST …/check` |
 * | `channels.add(input)`, `.list(query?)`, `.get(id)`, `.update(id, patch)`, `.delete(id)`, `.test(id)` | `/v1/channels…` |
 * | `events.list(query?)` | `GET /v1/events` |
 *
 * The calls act as an owner of one organization (see {@link CertkeeperOptions.organization}) in one
 * mode (`live` by default): what they create is what that organization's keys of that mode see over
 * HTTP, when a server shares the database.
 *
 * @example
 * import { createCertkeeper, CertkeeperApiError } from "certkeeper/embed";
 *
 * const ck = await createCertkeeper({ database: "file:./data/certkeeper.db" });
 * await ck.start(); // scheduled checks and notification deliveries
 * const certificate = await ck.certificates.add({ domain: "example.com" });
 * const { data: expiring } = await ck.certificates.list({ status: "expiring" });
 * await ck.close();
 */
import type { Static } from "@sinclair/typebox";
import { ConfigError, DEFAULT_CONFIG, type Config } from "../../core/config/mod.ts";
import { CertkeeperError, createLogger, MAX_BODY_DEPTH, nestedDeeperThan, newId, type Logger, type Mode, type OrganizationRecord, type Plan } from "../../core/base/mod.ts";
import type { Principal } from "../../core/auth/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { OPERATIONS } from "../../core/operations/mod.ts";
import type * as schemas from "../../core/schemas/mod.ts";
import { wire } from "../wiring/mod.ts";
import { embedFunctions, type EmbedFunctions } from "./_functions.ts";
import { resolveOrganization, type OrganizationOption } from "./_organization.ts";
import { toApiError } from "./api_error.ts";

export { CertkeeperApiError } from "./api_error.ts";
export { DEFAULT_EMBED_PLAN, DEFAULT_ORGANIZATION_NAME, type OrganizationOption } from "./_organization.ts";
export type { EmbedFunctions, EmbedQuery, OperationFunction, Page } from "./_functions.ts";

/** A certificate as `get`, `list`, `update` and `check` answer it. */
export type Certificate = Static<typeof schemas.Certificate>;
/** A certificate as `add` answers it (SPEC.md 2.2's 13 fields). */
export type CreatedCertificate = Static<typeof schemas.CreatedCertificate>;
export type AddCertificateInput = Static<typeof schemas.AddCertificateBody>;
export type UpdateCertificateInput = Static<typeof schemas.PatchCertificateBody>;
export type Channel = Static<typeof schemas.Channel>;
export type AddChannelInput = Static<typeof schemas.AddChannelBody>;
export type UpdateChannelInput = Static<typeof schemas.PatchChannelBody>;
export type ChannelTestResult = Static<typeof schemas.ChannelTestResult>;
/** An event with its deliveries, as `events.list` answers it. */
export type CertkeeperEvent = Static<typeof schemas.Event>;

export interface CertkeeperOptions {
  /**
   * Where the data lives: a libSQL URL (`file:path`, `http(s)://…`, `libsql://…`), `":memory:"` (the
   * in-memory store: gone with the process) or a {@link Store} you open and close yourself. Default:
   * `config.databaseUrl`, whose default `file:./data/certkeeper.db` is the server's.
   */
  database?: string | Store;
  /**
   * Overrides of the defaults (DEFAULT_CONFIG of core/config: CONTRACT §1's variables, parsed). To read the
   * environment as the server does: `config: configFromEnv(process.env)` from `certkeeper`.
   * `host`, `port` and `metricsToken` have no use here.
   */
  config?: Partial<Config>;
  /**
   * The organization the calls act for. Default: the database's only organization, or a new one named
   * `certkeeper` (plan `enterprise`) when the database has none; with several, choose one. A name that
   * no organization has creates one (plan default `enterprise`: embedding is self-hosting).
   */
  organization?: OrganizationOption;
  /** Live or test data, as `ck_live_` and `ck_test_` keys see it; default `live`. */
  mode?: Mode;
  /** Default: JSON lines at `config.logLevel` on stderr, so the host's stdout stays its own. */
  logger?: Logger;
  /** Where email notifications are written when `config.smtpUrl` is unset; default `./data/outbox`. */
  outboxDir?: string;
}

/** An embedded certkeeper: the API's operations as functions, and its background work. */
export interface Certkeeper extends EmbedFunctions {
  /** The organization every call acts for, as an owner. */
  readonly organization: { id: string; name: string; plan: Plan };
  readonly mode: Mode;
  /** The configuration in effect. */
  readonly config: Config;
  /**
   * Starts scheduled checks (every `config.checkIntervalMs`) and notification deliveries. As in a
   * server, they work for every organization in the database; leases keep processes sharing it from
   * doing anything twice.
   */
  start(): Promise<void>;
  /** Stops the background work, waiting for what is in flight; `start()` may follow. */
  stop(): Promise<void>;
  /** Stops, then releases connections and the store (unless the host passed its own `Store`). */
  close(): Promise<void>;
}

/**
 * Opens the database (migrating it), chooses the organization, and hands out the API as functions.
 * Nothing runs in the background until `start()`.
 *
 * @example
 * const ck = await createCertkeeper({ database: ":memory:", config: { checkIntervalMs: 60_000 } });
 * const channel = await ck.channels.add({ type: "webhook", name: "Ops", config: { url: "https://ops.example.com/hook" } });
 * console.log(channel.config.signingSecret); // whsec_…, shown this once
 * try {
 *   await ck.certificates.get("cert_missing");
 * } catch (error) {
 *   if (error instanceof CertkeeperApiError) console.log(error.code, error.status); // certificate_not_found 404
 * }
 */
export async function createCertkeeper(options: CertkeeperOptions = {}): Promise<Certkeeper> {
  // A key given as undefined overrides nothing (Partial<Config> allows it).
  const overrides = Object.fromEntries(Object.entries(options.config ?? {}).filter(([, value]) => value !== undefined)) as Partial<Config>;
  const database = options.database ?? overrides.databaseUrl ?? DEFAULT_CONFIG.databaseUrl;
  const config: Config = { ...DEFAULT_CONFIG, ...overrides, ...(typeof database === "string" ? { databaseUrl: database } : {}) };
  const mode = options.mode ?? "live";
  if (mode !== "live" && mode !== "test") throw new ConfigError("mode", `${JSON.stringify(mode)} is not a mode: use "live" or "test".`);
  const logger = options.logger ?? createLogger(config.logLevel, (line) => console.error(line));
  const wired = await wire(config, {
    store: typeof database !== "string" ? database : database === ":memory:" ? "memory" : undefined,
    logger,
    outboxDir: options.outboxDir,
  });
  const { core } = wired;
  const { services } = core;

  let organization: OrganizationRecord;
  try {
    // The host's own Store object is what two certkeepers share (each wires its own around it).
    const shared = typeof database === "string" ? services.store : database;
    organization = await oneAtATime(shared, () => resolveOrganization(services.store, services.admin, options.organization));
  } catch (error) {
    await wired.release();
    throw error;
  }

  let closed: Promise<void> | undefined;
  const principal = async (): Promise<Principal> => {
    // Read per call, so a plan changed by the CLI applies at once, as it does to API keys.
    const org = (await services.store.organizations.get(organization.id)) ?? organization;
    return { keyId: "embedded", userId: "embedded", role: "owner", scope: { organizationId: org.id, mode }, limits: org.limits };
  };

  /** Calls under way: close() lets them finish before it closes the store. */
  const inFlight = new Set<Promise<unknown>>();
  const functions = embedFunctions(OPERATIONS, (operation, input) => {
    if (closed) return Promise.reject(new Error(CLOSED));
    const requestId = newId("req");
    const call = (async () => {
      try {
        // As deep as the HTTP API reads a body: validation walks the value again on its stack.
        const maxDepth = MAX_BODY_DEPTH + (operation.bodyWrapLevels ?? 0);
        if (nestedDeeperThan(input.body, maxDepth) || nestedDeeperThan(input.query, MAX_BODY_DEPTH)) {
          throw new CertkeeperError("invalid_request", `The input nests arrays and objects more than ${maxDepth} levels deep.`);
        }
        const caller = { kind: "host", principal: await principal() } as const;
        // The host's input and the answer are copies: neither side sees the other change them later.
        const result = await core.call({ operation, caller, params: input.params, query: copied(input.query), body: copied(input.body), requestId });
        return { ...result, data: structuredClone(result.data) };
      } catch (error) {
        throw toApiError(error, logger, requestId);
      }
    })();
    inFlight.add(call);
    const settled = () => inFlight.delete(call);
    call.then(settled, settled);
    return call;
  });

  return {
    ...functions,
    organization: { id: organization.id, name: organization.name, plan: organization.plan },
    mode,
    config,
    async start() {
      if (closed) throw new Error(CLOSED);
      core.start();
    },
    stop: () => core.stop(),
    close() {
      closed ??= (async () => {
        await Promise.allSettled([...inFlight]);
        await wired.close();
      })();
      return closed;
    },
  };
}

const CLOSED = "This certkeeper is closed: create another with createCertkeeper().";

/** A structured copy of the host's input; what cannot be copied (a function) is left for validation to refuse. */
function copied<T>(value: T): T {
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

/**
 * Runs `work` after the one under way for the same store: two certkeepers created together over one
 * host Store would each find no organization and create one.
 */
function oneAtATime<T>(store: Store, work: () => Promise<T>): Promise<T> {
  const before = resolving.get(store) ?? Promise.resolve();
  const run = before.then(work, work);
  resolving.set(store, run.catch(() => undefined));
  return run;
}

const resolving = new WeakMap<Store, Promise<unknown>>();
