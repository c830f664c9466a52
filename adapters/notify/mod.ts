/** adapters/notify: the transports that carry rendered notifications out of the process. */
import type { Config } from "../../core/config/mod.ts";
import type { Transports } from "../../core/notify/mod.ts";
import type { TrustStore } from "../../core/tls/mod.ts";
import { createHttpTransport } from "./http.ts";
import { createOutboxTransport, DEFAULT_OUTBOX_DIR } from "./outbox.ts";
import { createSmtpTransport } from "./smtp.ts";
import { createHttpFetcher } from "./http_fetch.ts";

export { createHttpTransport, type HttpTransportOptions } from "./http.ts";
export { createSmtpTransport, type SmtpTransportOptions } from "./smtp.ts";
export { createOutboxTransport, DEFAULT_OUTBOX_DIR } from "./outbox.ts";
export { createHttpFetcher, type HttpFetcherOptions } from "./http_fetch.ts";

export interface ClosableTransports extends Transports {
  /** Closes kept-alive HTTP connections and the SMTP transport. */
  close(): Promise<void>;
}

/**
 * The transports configured by `config`: HTTP through core's guarded connect (CERTKEEPER_RESOLVE,
 * CERTKEEPER_ALLOW_PRIVATE_TARGETS, `trust` for HTTPS), email to CERTKEEPER_SMTP_URL or, when it is
 * unset, as `.eml` files in `options.outboxDir` (default `./data/outbox`).
 *
 * @example
 * const transports = createTransports(config, TrustStore.system(config.extraCaFile));
 * await transports.http.post(request, { timeoutMs: 10_000 });
 */
export function createTransports(config: Config, trust: TrustStore, options: { outboxDir?: string } = {}): ClosableTransports {
  const http = createHttpTransport({
    trust,
    resolve: config.resolve,
    allowPrivateTargets: config.allowPrivateTargets,
    // Shorter than the attempt: a host that never completes a connection fails fast, freeing its slot.
    connectTimeoutMs: Math.min(config.tlsTimeoutMs, Math.ceil(config.deliveryTimeoutMs / 2)),
  });
  const smtp = config.smtpUrl ? createSmtpTransport({ url: config.smtpUrl, trust, resolve: config.resolve, timeoutMs: config.deliveryTimeoutMs }) : null;
  const email = smtp ?? createOutboxTransport({ dir: options.outboxDir ?? DEFAULT_OUTBOX_DIR });
  const fetch = createHttpFetcher({ trust, resolve: config.resolve, allowPrivateTargets: config.allowPrivateTargets });
  // The CT service is the operator's choice, like the SMTP server: no private-address rule.
  const ctFetch = createHttpFetcher({ trust, resolve: config.resolve, allowPrivateTargets: true });
  return {
    http,
    email,
    fetch,
    ctFetch,
    async close() {
      await Promise.all([http.close(), smtp?.close(), fetch.close(), ctFetch.close()]);
    },
  };
}
