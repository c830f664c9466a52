/**
 * What the tests of AriClient itself share: the CA's renewal information service (ari_server.ts) for the
 * test CA, started before the file's tests and stopped after them, with an HTTPS fetcher trusting the
 * test root; AriClients asking it (one per process a test stands for); and leaves of the test CA.
 */
import { afterAll, beforeAll } from "bun:test";
import "reflect-metadata";
import { DAY } from "../../core/base/mod.ts";
import { AriClient, type AriLeaf } from "../../core/ari/mod.ts";
import type { RenewalInfoCache } from "../../core/store/mod.ts";
import { TrustStore } from "../../core/tls/mod.ts";
import { createHttpFetcher } from "../../adapters/notify/mod.ts";
import { testPki } from "./harness.ts";
import { createLeaf, type Issued } from "./pki.ts";
import { certIdOf, startAriServer, type AriServer } from "./ari_server.ts";

/** The test CA's intermediate, as its leaves name their issuer. */
const ISSUER = "certkeeper Test RSA CA";

export function ariClients(timeoutMs: number) {
  let server: AriServer | undefined;
  let fetcher: ReturnType<typeof createHttpFetcher> | undefined;
  beforeAll(async () => {
    const { root, rsaIntermediate } = await testPki();
    server = await startAriServer({ tlsIssuer: rsaIntermediate });
    fetcher = createHttpFetcher({ trust: new TrustStore([root.certPem]), resolve: [], allowPrivateTargets: true });
  });
  afterAll(async () => {
    await fetcher?.close();
    await server?.close();
  });
  const ari = (): AriServer => {
    if (!server) throw new Error("the ARI server starts before the file's tests");
    return server;
  };
  return {
    ari,
    /** An AriClient of the process `owner`, over `cache` (processes sharing a database share it). */
    client: (cache: RenewalInfoCache, owner = "proc_a") =>
      new AriClient({ fetcher: fetcher!, cache, owner, directories: [{ issuer: ISSUER, url: ari().directoryUrl }], timeoutMs }),
    /** A leaf of the test CA for `name`, valid from a day ago for 90 days. */
    async leafOf(name: string): Promise<{ issued: Issued; leaf: AriLeaf }> {
      const { rsaIntermediate } = await testPki();
      const now = Date.now();
      const issued = await createLeaf({ issuer: rsaIntermediate, dnsNames: [name], notBefore: new Date(now - DAY), notAfter: new Date(now + 89 * DAY) });
      return { issued, leaf: { certId: certIdOf(issued), issuerNames: [ISSUER], notBefore: now - DAY, notAfter: now + 89 * DAY } };
    },
    /** How many times the CA was asked about the leaf. */
    asked: (certId: string) => ari().requests.filter((request) => request.certId === certId).length,
  };
}
