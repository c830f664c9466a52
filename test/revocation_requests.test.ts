/**
 * The requests a revocation check sends (CONTRACT §14, RFC 6960 Appendix A.1, docs/revocation.md
 * "Metrics"): an OCSP POST says it carries an application/ocsp-request (responders refuse one that
 * does not), and each request sent, and only those, is told (it feeds
 * certkeeper_revocation_requests_total{source}): a CRL downloaded once for the leaves of one CA counts
 * once, however many leaves it answers for.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpFetcher } from "../adapters/notify/http_fetch.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";
import { RevocationChecker } from "../core/revocation/mod.ts";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { memoryCache } from "./support/revocation_harness.ts";

let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Requests Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=Requests CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

function checker() {
  const fetcher = createHttpFetcher({ trust: new TrustStore([]), resolve: [], allowPrivateTargets: true });
  const requests: Array<{ url: string; kind: string }> = [];
  const failures: string[] = [];
  const instance = new RevocationChecker({
    fetcher,
    cache: memoryCache(),
    timeoutMs: 2_000,
    onRequest: (request) => requests.push(request),
    onFailure: (failure) => failures.push(failure.message),
  });
  const ask = (leaf: Issued) =>
    instance.check({ leaf: new Certificate(leaf.cert.rawData), issuer: new Certificate(ca.cert.rawData), trusted: true, now: Date.now() });
  return { ask, requests, failures, close: () => fetcher.close() };
}

describe("the OCSP request", () => {
  test("is a POST with content-type application/ocsp-request: a responder that insists on it answers", async () => {
    let leaf!: Issued;
    const seen: Array<string | undefined> = [];
    const strict = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        seen.push(req.headers["content-type"]);
        if (req.method !== "POST" || req.headers["content-type"] !== "application/ocsp-request") {
          res.writeHead(415).end();
          return;
        }
        const body = ocspAnswer({ leaf, issuer: ca, status: { good: true } });
        res.writeHead(200, { "content-type": "application/ocsp-response", "content-length": String(body.length) }).end(Buffer.from(body));
      });
    });
    await new Promise<void>((resolve) => strict.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(strict.address() as AddressInfo).port}/ocsp`;
    leaf = await createLeaf({ issuer: ca, dnsNames: ["strict-responder.test"], ocspUrls: [url] });
    const tools = checker();
    try {
      expect(await tools.ask(leaf)).toMatchObject({ status: "good", source: "ocsp" });
      expect(seen).toEqual(["application/ocsp-request"]);
    } finally {
      await tools.close();
      await new Promise<void>((resolve) => strict.close(() => resolve()));
    }
  });
});

describe("requests told (certkeeper_revocation_requests_total)", () => {
  test("one CRL download for three leaves of one CA is told once, as a crl request", async () => {
    const url = `${responder.url}/counted.crl`;
    const leaves = await Promise.all(["7a01", "7a02", "7a03"].map((prefix, i) => createLeaf({ issuer: ca, serial: `${prefix}0102030405060708`, dnsNames: [`counted-${i}.test`], crlUrls: [url] })));
    const list = await crl({ issuer: ca, revoked: [] });
    responder.answer = () => ({ body: list });
    const tools = checker();
    try {
      for (const leaf of leaves) expect((await tools.ask(leaf)).status).toBe("good");
      expect(responder.requests.filter((r) => r.path === "/counted.crl")).toHaveLength(1);
      expect(tools.requests).toEqual([{ url, kind: "crl" }]);
    } finally {
      await tools.close();
    }
  });
});
