/**
 * For a test file of scripted STARTTLS servers: each `outcome(protocol, script)` starts a server of that
 * protocol on 127.0.0.1 running `script` (with a wildcard leaf of the test PKI to upgrade to), checks it
 * as a certificate's check does, and tells what came of it; the servers close after the file.
 */
import { afterAll, beforeAll } from "bun:test";
import { chainPem, createLeaf } from "./pki.ts";
import { startStarttlsServer, type Session, type StarttlsProtocol, type StarttlsServer } from "./starttls_servers.ts";
import { testPki, TEST_DOMAIN } from "./harness.ts";
import { retrieveEndpoints } from "../../core/tls/endpoint_retrieve.ts";

export interface ScriptedOutcome {
  /** "ok", or the endpoint's failure reason. */
  result: string;
  message: string;
  elapsed: number;
  /** What the client sent, as latin1 text (one character a byte). */
  sent: string;
  server: StarttlsServer;
}

/** Registers the file's set-up and clean-up; `domain` is checked (under the test domain), within `timeoutMs`. */
export function scriptedStarttls(domain: string, timeoutMs: number): (protocol: StarttlsProtocol, script: (s: Session) => Promise<void>) => Promise<ScriptedOutcome> {
  const servers: StarttlsServer[] = [];
  let chain: { cert: string; key: string };
  beforeAll(async () => {
    const { rsaIntermediate } = await testPki();
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`] });
    chain = { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });
  return async (protocol, script) => {
    const server = await startStarttlsServer(protocol, { ...chain, script: () => script });
    servers.push(server);
    const started = Date.now();
    const [endpoint] = await retrieveEndpoints(domain, server.port, {
      timeoutMs,
      protocol,
      rules: [{ pattern: domain, address: "127.0.0.1" }],
      allowPrivateTargets: true,
    });
    return {
      result: endpoint!.ok ? "ok" : endpoint!.reason,
      message: endpoint!.ok ? "" : endpoint!.message,
      elapsed: Date.now() - started,
      sent: server.received().join(""),
      server,
    };
  };
}

/** Waits for the client to hang up (a client still waiting would reach its timeout). */
export const untilHangUp = (s: Session) => s.read(() => false).catch(() => {});
