/**
 * How the sources are asked (CONTRACT §14): each request bounded by CERTKEEPER_TLS_TIMEOUT (the CRL's
 * too), a CRL server's HTTP error is a failed source whatever its body, a CRL server that failed once
 * is asked again at the next check, checks of one leaf at once share one question (so checks do not
 * hammer a responder), and a delegated responder counts only from its certificate's notBefore
 * (RFC 6960 §4.2.2.2); a leaf a trusted root signed directly (no intermediate sent) is asked about
 * with the root as its issuer; and an answer the shared cache cannot store is still the answer. Each test fails on a one-line change of core/revocation the rest of the
 * suite let pass.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor, memoryCache } from "./support/revocation_harness.ts";
import { until } from "./support/until.ts";
import { askAboutChain } from "../core/revocation/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
const OCSP_SIGNING = "1.3.6.1.5.5.7.3.9";
let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Sources Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=Sources CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

const requestsTo = (path: string) => responder.requests.filter((request) => request.path === path).length;

describe("a delegated responder", () => {
  test("whose certificate is not valid yet (notBefore tomorrow) is not believed", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["future-delegate.test"], ocspUrls: [`${responder.url}/future-delegate`] });
    const future = await createLeaf({
      issuer: ca,
      subject: "CN=Not Yet Valid OCSP Responder",
      dnsNames: [],
      extendedKeyUsages: [OCSP_SIGNING],
      notBefore: new Date(Date.now() + DAY),
      notAfter: new Date(Date.now() + 30 * DAY),
      freshKey: true,
    });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: future, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    const { ask, close, failures } = checkerFor();
    try {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/not signed by the issuer or a responder it delegated/);
    } finally {
      await close();
    }
  });
});

describe("CRL distribution points", () => {
  test("a CRL server that failed (503) is asked again at the next check, and its CRL then answers", async () => {
    const serial = "6a0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["crl-retry.test"], crlUrls: [`${responder.url}/retry.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial, reason: 1 }] });
    let down = true;
    responder.answer = () => (down ? { status: 503 } : { body: list });
    const { ask, close } = checkerFor();
    try {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      down = false;
      expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise" });
      expect(requestsTo("/retry.crl")).toBe(2);
    } finally {
      await close();
    }
  });

  test("a CRL served with HTTP 404 is a failed source, even when the body is a CRL that verifies", async () => {
    const serial = "6b0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["crl-404.test"], crlUrls: [`${responder.url}/gone.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial, reason: 1 }] });
    responder.answer = () => ({ status: 404, body: list });
    const { ask, close, failures } = checkerFor();
    try {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/answered HTTP 404/);
    } finally {
      await close();
    }
  });

  test("a CRL server that never answers is given up at the time limit (CERTKEEPER_TLS_TIMEOUT), not later", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["crl-hang.test"], crlUrls: [`${responder.url}/hang.crl`] });
    responder.answer = () => ({ hang: true });
    const { ask, close, failures } = checkerFor({ timeoutMs: 400 });
    try {
      const started = Date.now();
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(Date.now() - started).toBeLessThan(2_500);
      expect(failures.join("\n")).toMatch(/within 400 ms/);
    } finally {
      await close();
    }
  });
});

describe("one question per leaf at once", () => {
  test("two checks of the same leaf at the same time send one OCSP request and get the same answer", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["in-flight.test"], ocspUrls: [`${responder.url}/in-flight`] });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    responder.answer = async () => {
      await gate;
      return { body: ocspAnswer({ leaf, issuer: ca, status: { good: true } }) };
    };
    const { ask, close } = checkerFor();
    try {
      const both = Promise.all([ask(leaf, ca), ask(leaf, ca)]);
      await until("the responder to be asked", async () => requestsTo("/in-flight") >= 1, 5_000);
      release();
      const [first, second] = await both;
      expect([first.status, second.status]).toEqual(["good", "good"]);
      expect(requestsTo("/in-flight")).toBe(1);
    } finally {
      await close();
    }
  });
});

describe("the issuer and the cache", () => {
  test("a leaf signed directly by a trusted root, sent alone: the root is its issuer and the leaf is asked about", async () => {
    const leaf = await createLeaf({ issuer: root, dnsNames: ["root-issued.test"], ocspUrls: [`${responder.url}/root-issued`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: root, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    const { checker, close } = checkerFor();
    try {
      const state = await askAboutChain(checker, { certs: [new Certificate(leaf.cert.rawData)], trusted: true, trust: new TrustStore([root.certPem]), now: Date.now() });
      expect(state).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
    } finally {
      await close();
    }
  });

  test("an answer the shared cache fails to store is still the answer of this check", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["cache-down.test"], ocspUrls: [`${responder.url}/cache-down`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    const cache = { ...memoryCache(), put: async () => { throw new Error("database is locked"); } };
    const { ask, close, failures } = checkerFor({ cache });
    try {
      expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
      expect(failures.join("\n")).toMatch(/database is locked/);
    } finally {
      await close();
    }
  });
});
