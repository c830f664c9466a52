/**
 * A certkeeper with real transports and a fake clock, and local receivers standing in for PagerDuty
 * (plain HTTP, the operator's CERTKEEPER_PAGERDUTY_URL), Telegram (CERTKEEPER_TELEGRAM_URL) and a Teams
 * workflow webhook (HTTPS, the caller's URL), plus a generic webhook: for the fleet tests of CONTRACT §16.
 */
import { DEFAULT_CONFIG, type Config } from "../../core/config/config.ts";
import { TrustStore } from "../../core/tls/trust_store.ts";
import { HOUR } from "../../core/base/time.ts";
import { createTransports } from "../../adapters/notify/mod.ts";
import { chainPem, createLeaf } from "./pki.ts";
import { startTlsServer, type TlsTestServer } from "./servers.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./harness.ts";
import { startHttpReceiver, type HttpReceiver } from "./receivers.ts";
import { FakeClock } from "./fake_clock.ts";

export const ROUTING_KEY = "R0UTINGKEYR0UTINGKEYR0UTINGKEY12";
export const BOT_TOKEN = "123456789:AAEbot-t0ken_secret-part-0123456789";

export interface FleetWorld {
  h: Harness;
  clock: FakeClock;
  pagerduty: HttpReceiver;
  telegram: HttpReceiver;
  teams: HttpReceiver;
  hook: HttpReceiver;
  /** Runs every due check, then every due delivery. */
  settle(): Promise<void>;
  /** A TLS server for `domain` whose certificate ends at `notAfter`. */
  tlsServer(domain: string, notAfter: Date, serial?: string): Promise<TlsTestServer>;
  renew(server: TlsTestServer, domain: string, notAfter: Date, serial: string): Promise<void>;
  close(): Promise<void>;
}

export async function fleetWorld(options: { config?: Partial<Config> } = {}): Promise<FleetWorld> {
  const { root, rsaIntermediate } = await testPki();
  const trust = new TrustStore([root.certPem]);
  const clock = new FakeClock(Date.now());
  const pagerduty = await startHttpReceiver();
  const telegram = await startHttpReceiver();
  const hook = await startHttpReceiver();
  const teamsLeaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`teams.${TEST_DOMAIN}`] });
  const teams = await startHttpReceiver({ tls: { cert: chainPem(teamsLeaf, rsaIntermediate), key: teamsLeaf.keyPem }, host: `teams.${TEST_DOMAIN}` });
  const config: Config = {
    ...DEFAULT_CONFIG, alertPolicy: "days" as const,
    allowPrivateTargets: true,
    resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }],
    tlsTimeoutMs: 1000,
    deliveryRetryMs: [1000, 5000, 60_000],
    checkIntervalMs: 6 * HOUR,
    logLevel: "error",
    deliveryTimeoutMs: 1000,
    pagerdutyUrl: pagerduty.url,
    telegramUrl: `${telegram.url}/tg`,
    ...options.config,
  };
  const transports = createTransports(config, trust);
  const h = await createHarness({ store: "libsql", clock, config, transports, trust, random: () => 0.5 });
  const servers: TlsTestServer[] = [];
  return {
    h,
    clock,
    pagerduty,
    telegram,
    teams,
    hook,
    async settle() {
      await h.core.services.scheduler.runDue();
      await h.core.services.deliveries!.loop.runDue();
    },
    async tlsServer(domain, notAfter, serial) {
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, serial });
      const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
      servers.push(server);
      return server;
    },
    async renew(server, domain, notAfter, serial) {
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter, serial });
      server.setCertificate(chainPem(leaf, rsaIntermediate), leaf.keyPem);
    },
    async close() {
      await h.core.stop();
      await Promise.all([pagerduty.close(), telegram.close(), teams.close(), hook.close(), transports.close(), ...servers.map((s) => s.close())]);
      await h.close();
    },
  };
}
