/**
 * The one wiring of certkeeper: from a config to the concrete store, trust, transports and core.
 * The server (adapters/elysia), the embedding API (adapters/embed) and the CLI (adapters/cli) all
 * start from here, so a new store, transport or core option is added once.
 *
 * @example
 * const wired = await wire(configFromEnv(process.env), { passwords: bunPasswords });
 * wired.core.start();
 * // …
 * await wired.close();
 */
import type { Config } from "../../core/config/mod.ts";
import { createCore, type Core, type CoreOptions } from "../../core/app/mod.ts";
import { createLogger, type Logger } from "../../core/base/mod.ts";
import type { Store } from "../../core/store/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import { openConfiguredStore } from "./accounts.ts";
import { createMemoryStore } from "../memory/mod.ts";
import { createTransports, type ClosableTransports } from "../notify/mod.ts";
import { CheckThreads } from "../check_threads/mod.ts";
import { CtReadThread } from "../ct_threads/mod.ts";

export interface WireOptions extends Partial<Omit<CoreOptions, "config" | "store" | "transports">> {
  /**
   * Where the data lives. Default: the libSQL database at `config.databaseUrl`, opened (and migrated)
   * here and closed by `close()`. `"memory"`: a new in-memory store. A `Store`: yours, never closed here.
   */
  store?: Store | "memory";
  /** Where email notifications are written when `config.smtpUrl` is unset; default `./data/outbox`. */
  outboxDir?: string;
  /** Opened for one short command: the database without its background checkpointer. */
  brief?: boolean;
}

export interface Wired {
  config: Config;
  store: Store;
  trust: TrustStore;
  transports: ClosableTransports;
  logger: Logger;
  core: Core;
  /** Where checks' handshakes run beside the event loop (CERTKEEPER_CHECK_THREADS); absent at 0 or with a given source. */
  checkThreads: CheckThreads | undefined;
  /** Releases what the wiring opened: the check threads (once their checks under way are answered), the transports' connections, and the store unless it was given. */
  release(): Promise<void>;
  /** Stops core's background work (waiting for what is in flight), then releases. */
  close(): Promise<void>;
}

export async function wire(config: Config, options: WireOptions = {}): Promise<Wired> {
  const { store: storeOption, outboxDir, brief, ...coreOptions } = options;
  const logger = options.logger ?? createLogger(config.logLevel, { format: resolveLogFormat(config.logFormat) });
  const ownsStore = storeOption === undefined || storeOption === "memory";
  const store =
    storeOption === "memory"
      ? createMemoryStore()
      : (storeOption ?? (await openConfiguredStore(config, { brief, logger })));
  const trust = options.trust ?? TrustStore.system(config.extraCaFile);
  const transports = createTransports(config, trust, { outboxDir });
  // Handshakes on the event loop and CERTKEEPER_CHECK_THREADS threads beside it, unless a source or
  // connector was given.
  const threads = !options.source && !options.connector && config.checkThreads > 0 ? new CheckThreads(config.checkThreads, { logger }) : undefined;
  // Following the CT logs: their entries are fetched and decoded on a thread of their own, off the event loop.
  const ctReader =
    !options.ctEntryReader && config.ctSource === "logs" && transports.ctFetch
      ? new CtReadThread({ extraCaFile: config.extraCaFile, resolve: config.resolve, fetcher: transports.ctFetch, logger })
      : undefined;
  const core = createCore({
    ...coreOptions,
    connector: options.connector ?? threads,
    ctEntryReader: options.ctEntryReader ?? ctReader,
    config,
    store,
    logger,
    trust,
    transports,
  });
  let released: Promise<void> | undefined;
  const release = () =>
    (released ??= (async () => {
      await threads?.close();
      await ctReader?.close();
      await transports.close();
      if (ownsStore) await store.close();
    })());
  return {
    config,
    store,
    trust,
    transports,
    logger,
    core,
    checkThreads: threads,
    release,
    async close() {
      await core.stop();
      await release();
    },
  };
}

/** `auto`: readable lines for a person at a terminal, JSON lines for a log collector. */
export function resolveLogFormat(format: Config["logFormat"]): "json" | "pretty" {
  return format === "auto" ? (process.stdout.isTTY ? "pretty" : "json") : format;
}
