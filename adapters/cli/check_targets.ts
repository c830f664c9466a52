/**
 * What `check` does (check.ts is the command): each target retrieved and judged as the server would,
 * nothing stored, one line per target or the GET views, and the exit code of a monitoring plugin.
 */
import { isIP } from "node:net";
import type { Config } from "../../core/config/mod.ts";
import { ALERT_POLICIES, CertkeeperError, daysLeft, PROTOCOLS, type AlertPolicy, type Protocol } from "../../core/base/mod.ts";
import {
  defaultMailDomain,
  explainAttention,
  explainCertificate,
  isRenewalReason,
  normalizeConnectTo,
  normalizeDomain,
  presentChecked,
  type ExplainedCertificate,
} from "../../core/certificates/mod.ts";
import { DEFAULT_PORTS } from "../../core/starttls/mod.ts";
import type { CertificateSource } from "../../core/monitor/mod.ts";
import { UsageError, type CommandContext, type CommandOutcome } from "./command_table.ts";
import { cliLogger } from "./commands.ts";
import { loadTrust } from "./trust.ts";

/** Exit codes of a monitoring plugin (Nagios, Icinga, Sensu): the worst status decides. */
const EXIT_BY_STATUS: Record<string, number> = { valid: 0, expiring: 1, expired: 2, revoked: 2, invalid: 2, unreachable: 2 };

interface Target {
  domain: string;
  port: number;
  protocol: Protocol;
  connectTo: string | null;
  alertPolicy: AlertPolicy;
}

/** One target's result: the check view (nulls where nothing was retrieved) and why it failed. */
interface CheckResult {
  view: Record<string, unknown> & { domain: string; port: number; status: string; statusReason: string | null; daysUntilExpiry: number | null };
  explanation: string | null;
}

export async function runCheck({ config, args, flags }: CommandContext): Promise<CommandOutcome> {
  const protocol = (flags.protocol ?? "tls") as Protocol;
  const alertPolicy = (flags["alert-policy"] ?? config.alertPolicy) as AlertPolicy;
  if (!ALERT_POLICIES.includes(alertPolicy)) throw new UsageError(`--alert-policy must be renewal or days; got "${flags["alert-policy"]}"`);
  if (!PROTOCOLS.includes(protocol)) throw new UsageError(`--protocol must be one of ${PROTOCOLS.join(", ")}; got "${flags.protocol}"`);
  let connectTo: string | null;
  try {
    connectTo = normalizeConnectTo(flags["connect-to"]);
  } catch (error) {
    if (error instanceof CertkeeperError) throw new UsageError(`--connect-to: ${error.message}`);
    throw error;
  }
  const targets = args.map((arg) => ({ ...parseTarget(arg, DEFAULT_PORTS[protocol]), protocol, connectTo, alertPolicy }));
  // Nothing is stored: the wiring's in-memory store is gone with the command. (Loaded here, not at
  // the CLI's start: help and usage errors need none of it.)
  const { wire } = await import("../wiring/mod.ts");
  const wired = await wire(config, { store: "memory", trust: await loadTrust(config), logger: cliLogger(config) });
  const results = await mapLimited(targets, config.checkConcurrency, (target) => checkOne(wired.core.source, config, target)).finally(() =>
    wired.release(),
  );
  const exitCode = Math.max(...results.map((r) => EXIT_BY_STATUS[r.view.status] ?? 2));
  const views = results.map((r) => r.view);
  return {
    json: views.length === 1 ? views[0] : views,
    text: formatLines(results.map((r) => r.view)),
    notes: results.flatMap((r) => (r.explanation ? [r.explanation] : [])),
    exitCode,
  };
}

/** `DOMAIN[:PORT]`, normalized; a usage error (exit 3) naming what to write instead. */
function parseTarget(input: string, defaultPort = 443): Pick<Target, "domain" | "port"> {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(input);
  // A bare IPv6 address is read whole, never cut at its last colon.
  const match = bracketed ?? (isIP(input) === 6 ? [input, input, undefined] : /^(.*?)(?::(\d+))?$/.exec(input)!);
  const host = match[1]!;
  const port = match[2] === undefined ? defaultPort : Number(match[2]);
  if (isIP(host) !== 0 || isIP(input) !== 0) {
    throw new UsageError(
      `"${input}" is an IP address: check takes the host name the certificate was issued for, and checks it ` +
        `with SNI and host-name verification. To check a server by its address, name both: ` +
        `certkeeper check example.com${match[2] ? `:${port}` : ""} --connect-to ${isIP(input) === 6 ? input : host} ` +
        `(loopback and private addresses also need CERTKEEPER_ALLOW_PRIVATE_TARGETS=true)`,
    );
  }
  let domain: string;
  try {
    domain = normalizeDomain(host);
  } catch (error) {
    if (error instanceof CertkeeperError) throw new UsageError(error.message);
    throw error;
  }
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`Port ${port} of "${input}" is out of range 1-65535`);
  return { domain, port };
}

async function checkOne(source: CertificateSource, config: Config, target: Target): Promise<CheckResult> {
  const now = Date.now();
  const outcome = await source.inspect(target);
  if (outcome.ok) {
    const view = presentChecked(
      { ...target, details: outcome.details, problem: outcome.problem, failure: null, lastCheckedAt: now, tls: outcome.tls ?? null, endpoints: outcome.endpoints ?? [], dns: outcome.dns ?? null },
      now,
    );
    return { view: view as CheckResult["view"], explanation: explainProblem(view, config) };
  }
  let explanation = `${target.domain}:${target.port}: no certificate could be retrieved: ${outcome.message}.`;
  if (outcome.reason === "connection_refused" && refusedAsPrivate(config, outcome.message)) {
    explanation += " To check servers on loopback or private addresses (a local or internal server), set CERTKEEPER_ALLOW_PRIVATE_TARGETS=true.";
  }
  if (outcome.reason === "dns_error") explanation += " To point a name at an address yourself, set CERTKEEPER_RESOLVE=name=address.";
  const view = {
    domain: target.domain,
    status: "unreachable",
    daysUntilExpiry: null,
    expiresAt: null,
    issuedAt: null,
    issuer: null,
    subject: null,
    subjectAlternativeNames: [],
    serialNumber: null,
    signatureAlgorithm: null,
    port: target.port,
    lastCheckedAt: new Date(now).toISOString(),
    chain: [],
    statusReason: outcome.reason,
    revocation: null,
    protocol: target.protocol,
    connectTo: target.connectTo,
    mailDomain: target.protocol === "smtp" ? defaultMailDomain(target.domain) : null,
    endpoints: (outcome.endpoints ?? []).map((e) => ({
      address: e.address,
      status: "unreachable",
      statusReason: e.failure,
      serialNumber: null,
      fingerprintSha256: null,
      expiresAt: null,
      lastCheckedAt: new Date(now).toISOString(),
      dane: null,
    })),
    chainExpiresAt: null,
    publicKey: null,
    tls: null,
    warnings: [],
    alertPolicy: target.alertPolicy,
    renewal: null,
    deployment: null,
  };
  return { view, explanation };
}

/**
 * A hint for the problems an operator can fix from here, after the target. An untrusted chain names
 * the CLI's own setting; a renewal reason (overdue, requested, blocked by CAA), or what still needs
 * someone about a certificate without a reason, gets the sentence the settings area opens the
 * certificate's page with, so both say the same thing.
 */
export function explainProblem(view: ExplainedCertificate, config: Pick<Config, "extraCaFile">): string | null {
  const reason = view.statusReason;
  const target = `${view.domain}:${view.port}`;
  if (reason === "untrusted_issuer" || reason === "self_signed") {
    const trusting = config.extraCaFile ? ` (CERTKEEPER_EXTRA_CA_FILE is "${config.extraCaFile}")` : "";
    return `${target}: the certificate does not lead to a trusted root${trusting}. If it comes from your own CA, put that CA's root certificate in a PEM file and set CERTKEEPER_EXTRA_CA_FILE to its path.`;
  }
  if (isRenewalReason(reason)) return `${target}: ${explainCertificate(view)}`;
  // No reason, yet something may need someone: a renewal overdue under the days policy, CAA that
  // forbids the issuer, DANE or MTA-STS that refuse it, a weak key or protocol.
  const attention = reason ? null : explainAttention(view);
  return attention ? `${target}: ${attention}` : null;
}

/** `valid        89 days  -              example.com:443`, aligned. */
function formatLines(views: CheckResult["view"][]): string {
  const rows = views.map((v) => [
    v.status,
    v.daysUntilExpiry === null ? "-" : daysLeft(v.daysUntilExpiry),
    v.statusReason ?? "-",
    `${v.domain}:${v.port}`,
  ]);
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  return rows
    .map(([status, days, reason, target]) => `${status!.padEnd(widths[0]!)}  ${days!.padStart(widths[1]!)}  ${reason!.padEnd(widths[2]!)}  ${target}`)
    .join("\n");
}

async function mapLimited<T, R>(items: T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Whether `message` is this process refusing a loopback or private address because its settings do not
 * allow one (`CERTKEEPER_ALLOW_PRIVATE_TARGETS`): what a server with other settings may well reach.
 */
export function refusedAsPrivate(config: Pick<Config, "allowPrivateTargets">, message: string | null): boolean {
  return !config.allowPrivateTargets && /does not connect to/.test(message ?? "");
}
