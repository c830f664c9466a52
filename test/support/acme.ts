/**
 * A real ACME CA and a real ACME client on loopback: Debian's `pebble` (the ACME test CA) and `lego`
 * (an ACME client), as processes in a temporary folder. Pebble serves its API over HTTPS with a
 * certificate of the test PKI, issues certificates of any lifetime (`certificateValidityPeriod`) and
 * answers every challenge as valid (PEBBLE_VA_ALWAYS_VALID), so nothing leaves 127.0.0.1. Where either
 * tool is missing, {@link findAcmeTools} says why, so the tests can be reported as skipped with it.
 */
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "./cli.ts";
import { chainPem, createLeaf, type Issued } from "./pki.ts";

export type AcmeToolsLookup = { found: true; pebble: string; lego: string } | { found: false; reason: string };

/**
 * Where pebble and lego are (CERTKEEPER_TEST_PEBBLE / CERTKEEPER_TEST_LEGO, else PATH, else Debian's
 * /usr/bin), or why the tests cannot run.
 */
export function findAcmeTools(env: Record<string, string | undefined> = process.env): AcmeToolsLookup {
  const find = (name: string, variable: string): { path: string } | { reason: string } => {
    const chosen = env[variable];
    if (chosen) return existsSync(chosen) ? { path: chosen } : { reason: `${variable}=${chosen} does not exist` };
    const path = Bun.which(name) ?? (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : null);
    return path ? { path } : { reason: `no ${name} on PATH or in /usr/bin (install it: apt-get install -y ${name}, or set ${variable})` };
  };
  const pebble = find("pebble", "CERTKEEPER_TEST_PEBBLE");
  const lego = find("lego", "CERTKEEPER_TEST_LEGO");
  if ("path" in pebble && "path" in lego) return { found: true, pebble: pebble.path, lego: lego.path };
  return { found: false, reason: [pebble, lego].flatMap((tool) => ("reason" in tool ? [tool.reason] : [])).join("; ") };
}

/** Most of a process's output kept for a failure message. */
const OUTPUT_TAIL = 8_000;

export interface Pebble {
  /** The ACME directory, https://127.0.0.1:PORT/dir. */
  directoryUrl: string;
  /** Pebble's issuing root (generated at its start), as PEM, from its management API. */
  rootPem: string;
  /** The last of what pebble logged (for failure messages). */
  output(): string;
  close(): Promise<void>;
}

export interface PebbleOptions {
  /** A folder of the test's for pebble's configuration and HTTPS certificate. */
  dir: string;
  /** Lifetime of the certificates it issues, in seconds (each lives one second less: notAfter is inclusive). */
  validitySeconds: number;
  /** Pebble's own HTTPS certificate: a leaf for 127.0.0.1 and localhost, and the intermediates it sends. */
  https: { leaf: Issued; intermediates: Issued[]; rootPem: string };
}

/** A certificate of the test PKI for pebble's (and so the ACME client's) HTTPS: 127.0.0.1 and localhost. */
export function pebbleHttpsLeaf(issuer: Issued): Promise<Issued> {
  return createLeaf({ issuer, dnsNames: ["localhost"], ipAddresses: ["127.0.0.1"], freshKey: true });
}

/** Starts pebble on free loopback ports and waits until its management API hands out the root. */
export async function startPebble(pebblePath: string, options: PebbleOptions): Promise<Pebble> {
  const { dir } = options;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "https.pem"), chainPem(options.https.leaf, ...options.https.intermediates));
  writeFileSync(join(dir, "https.key"), options.https.leaf.keyPem);
  const [acmePort, managementPort, httpPort, tlsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const config = {
    pebble: {
      listenAddress: `127.0.0.1:${acmePort}`,
      managementListenAddress: `127.0.0.1:${managementPort}`,
      certificate: join(dir, "https.pem"),
      privateKey: join(dir, "https.key"),
      // The validation ports are never used: every challenge is answered as valid.
      httpPort,
      tlsPort,
      ocspResponderURL: "",
      externalAccountBindingRequired: false,
      certificateValidityPeriod: options.validitySeconds,
    },
  };
  writeFileSync(join(dir, "pebble.json"), JSON.stringify(config));
  const child = Bun.spawn([pebblePath, "-config", join(dir, "pebble.json")], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      // No challenge is fetched (nothing leaves loopback), no random sleeps, no random nonce rejection.
      PEBBLE_VA_ALWAYS_VALID: "1",
      PEBBLE_VA_NOSLEEP: "1",
      PEBBLE_WFE_NONCEREJECT: "0",
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const log = collectOutput(child);
  const close = async () => {
    child.kill("SIGKILL");
    await child.exited;
  };
  const deadline = Date.now() + 15_000;
  let lastError = "";
  while (Date.now() < deadline && child.exitCode === null) {
    try {
      const response = await fetch(`https://127.0.0.1:${managementPort}/roots/0`, { tls: { ca: options.https.rootPem } });
      const text = await response.text();
      if (response.status === 200 && text.includes("BEGIN CERTIFICATE")) {
        return { directoryUrl: `https://127.0.0.1:${acmePort}/dir`, rootPem: text, output: log, close };
      }
      lastError = `management API answered ${response.status}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await Bun.sleep(50);
  }
  await close();
  throw new Error(`pebble did not start (${lastError})\n${log()}`);
}

/** A certificate lego obtained: what a TLS server installs, and the leaf's fields. */
export interface LegoCertificate {
  /** The leaf, then the issuer (lego's bundle). */
  certPem: string;
  keyPem: string;
  serialNumber: string;
  notBefore: number;
  notAfter: number;
}

export interface Lego {
  /** `lego run`: registers an account (the first time) and obtains a certificate. */
  obtain(): Promise<LegoCertificate>;
  /** `lego renew`: replaces the certificate whatever its days left, at once (no random sleep). */
  renew(): Promise<LegoCertificate>;
}

export interface LegoOptions {
  /** Lego's folder (accounts, certificates). */
  dir: string;
  directoryUrl: string;
  /** PEM file of the root that signs pebble's HTTPS certificate. */
  caFile: string;
  domain: string;
}

/** lego as an operator runs it, against `directoryUrl`, for one domain. */
export function legoClient(legoPath: string, options: LegoOptions): Lego {
  const common = [
    "--server", options.directoryUrl,
    "--accept-tos",
    "--email", `acme@${options.domain}`,
    "--domains", options.domain,
    "--path", options.dir,
    "--http",
  ];
  const run = async (command: string[]): Promise<LegoCertificate> => {
    // The HTTP-01 solver listens while the order is open (pebble never connects to it).
    const solverPort = await freePort();
    const child = Bun.spawn([legoPath, ...common, "--http.port", `127.0.0.1:${solverPort}`, ...command], {
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: options.dir, LEGO_CA_CERTIFICATES: options.caFile },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    clearTimeout(timer);
    if (code !== 0) throw new Error(`lego ${command.join(" ")} exited ${code}\n${(stdout + stderr).slice(-OUTPUT_TAIL)}`);
    return readCertificate(options.dir, options.domain);
  };
  return {
    obtain: () => run(["run"]),
    renew: () => run(["renew", "--days", "1", "--no-random-sleep"]),
  };
}

function readCertificate(dir: string, domain: string): LegoCertificate {
  const certPem = readFileSync(join(dir, "certificates", `${domain}.crt`), "utf8");
  const keyPem = readFileSync(join(dir, "certificates", `${domain}.key`), "utf8");
  const leaf = new x509.X509Certificate(certPem.slice(0, certPem.indexOf("-----END CERTIFICATE-----") + 25));
  return {
    certPem,
    keyPem,
    serialNumber: leaf.serialNumber,
    notBefore: leaf.notBefore.getTime(),
    notAfter: leaf.notAfter.getTime(),
  };
}

/** Keeps the tail of a process's stdout and stderr as it runs (a full pipe would stall it). */
function collectOutput(child: Subprocess<"ignore", "pipe", "pipe">): () => string {
  let text = "";
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) text = (text + decoder.decode(chunk, { stream: true })).slice(-OUTPUT_TAIL);
  };
  void drain(child.stdout);
  void drain(child.stderr);
  return () => text;
}
