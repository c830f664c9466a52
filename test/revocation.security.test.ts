/** Hostile and broken revocation sources: each is `unavailable` (soft-fail), never a crash or a stuck check. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, ocspError, OCSPResponseStatus, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

let root: Issued;
let ca: Issued;
let otherCa: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa();
  ca = await createIntermediateCa(root);
  otherCa = await createIntermediateCa(root, { name: "CN=Other CA" });
  responder = await startResponder();
});
afterAll(() => responder.close());

async function leafWith(name: string, urls: { ocsp?: string; crl?: string }) {
  return createLeaf({
    issuer: ca,
    dnsNames: [name],
    ocspUrls: urls.ocsp ? [`${responder.url}${urls.ocsp}`] : undefined,
    crlUrls: urls.crl ? [`${responder.url}${urls.crl}`] : undefined,
  });
}

async function expectUnavailable(leaf: Issued, message: RegExp, options: { timeoutMs?: number; allowPrivateTargets?: boolean } = {}) {
  const { ask, close, failures } = checkerFor(options);
  const state = await ask(leaf, ca);
  await close();
  expect(state).toEqual({ status: "unavailable", source: null, checkedAt: expect.any(Number), revokedAt: null, reason: null, validUntil: null });
  expect(failures.join("\n")).toMatch(message);
}

describe("revocation: OCSP answers that must not be believed", () => {
  test("a signature that does not verify (a lying responder)", async () => {
    const leaf = await leafWith("lying.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date() } }, breakSignature: true }) });
    await expectUnavailable(leaf, /signature does not verify/);
  });

  test("signed by another CA's key", async () => {
    const leaf = await leafWith("forged.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: otherCa, status: { revoked: { at: new Date() } } }) });
    await expectUnavailable(leaf, /not signed by the issuer or a responder it delegated/);
  });

  test("a 'delegated responder' without id-kp-OCSPSigning", async () => {
    const leaf = await leafWith("no-eku.test", { ocsp: "/ocsp" });
    const impostor = await createLeaf({ issuer: ca, subject: "CN=Not a responder", dnsNames: ["x.test"], freshKey: true });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: impostor, status: { good: true } }) });
    await expectUnavailable(leaf, /not signed by the issuer/);
  });

  test("a delegated responder certified by another CA", async () => {
    const leaf = await leafWith("other-delegate.test", { ocsp: "/ocsp" });
    const delegate = await createLeaf({ issuer: otherCa, subject: "CN=Other responder", dnsNames: [], extendedKeyUsages: ["1.3.6.1.5.5.7.3.9"], freshKey: true });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: delegate, status: { good: true } }) });
    await expectUnavailable(leaf, /not signed by the issuer/);
  });

  test("an answer about another serial", async () => {
    const leaf = await leafWith("wrong-serial.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, serial: "0123456789" }) });
    await expectUnavailable(leaf, /about another certificate/);
  });

  test("an answer about the same serial of another issuer", async () => {
    const leaf = await leafWith("wrong-issuer.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: otherCa, signer: ca, status: { good: true } }) });
    await expectUnavailable(leaf, /about another certificate/);
  });

  test("an expired answer (nextUpdate passed), replayed", async () => {
    const leaf = await leafWith("stale.test", { ocsp: "/ocsp" });
    const thisUpdate = new Date(Date.now() - 10 * 86_400_000);
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate, nextUpdate: new Date(Date.now() - 86_400_000) }) });
    await expectUnavailable(leaf, /out of date/);
  });

  test("an answer dated in the future", async () => {
    const leaf = await leafWith("future.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(Date.now() + 86_400_000), nextUpdate: new Date(Date.now() + 2 * 86_400_000) }) });
    await expectUnavailable(leaf, /in the future/);
  });

  test("tryLater, and a body that is not DER", async () => {
    const leaf = await leafWith("try-later.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspError(OCSPResponseStatus.tryLater) });
    await expectUnavailable(leaf, /tryLater/);
    responder.answer = () => ({ body: "<html>this is not an OCSP response</html>" });
    await expectUnavailable(leaf, /not a DER OCSP response/);
    responder.answer = () => ({ body: new Uint8Array([0x30, 0x84, 0xff, 0xff, 0xff, 0xff, 0x01]) });
    await expectUnavailable(leaf, /not a DER OCSP response/);
  });

  test("an answer carrying dozens of certificates is refused before it is parsed; one carrying two is read", async () => {
    // Parsing costs about a millisecond a certificate: 64 KB of them at every ask held the event loop.
    const leaf = await leafWith("crowded.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, extraCertificates: Array.from({ length: 40 }, () => otherCa) }) });
    await expectUnavailable(leaf, /carries 40 certificates/);
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, extraCertificates: [ca, root] }) });
    const { ask, close } = checkerFor();
    expect(await ask(leaf, ca)).toMatchObject({ status: "good", source: "ocsp" });
    await close();
  });
});

describe("revocation: responders that misbehave on the wire", () => {
  test("a responder that trickles bytes is cut off at the time limit", async () => {
    const leaf = await leafWith("trickle.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true } }), trickleMs: 50 });
    const started = Date.now();
    await expectUnavailable(leaf, /did not finish its answer within 600 ms/, { timeoutMs: 600 });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test("a responder that never answers is cut off at the time limit", async () => {
    const leaf = await leafWith("hang.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ hang: true });
    const started = Date.now();
    await expectUnavailable(leaf, /did not answer within 500 ms/, { timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  test("an OCSP answer over 64 KiB fails; a CRL over 20 MiB fails", async () => {
    const leaf = await leafWith("huge.test", { ocsp: "/ocsp", crl: "/huge.crl" });
    responder.answer = (r) => ({ body: new Uint8Array(r.path === "/ocsp" ? 64 * 1024 + 1 : 20 * 1024 * 1024 + 1) });
    await expectUnavailable(leaf, /more than the 65536 bytes allowed[\s\S]*more than the 20971520 bytes allowed/);
  });

  test("a body longer than its limit without a Content-Length is cut off while reading", async () => {
    const leaf = await leafWith("chunked.test", { ocsp: "/ocsp" });
    responder.answer = () => ({ body: new Uint8Array(70 * 1024), headers: { "content-length": "" } });
    const { ask, close, failures } = checkerFor();
    expect((await ask(leaf, ca)).status).toBe("unavailable");
    await close();
    expect(failures.join("\n")).toMatch(/65536 bytes/);
  });

  test("a redirect is not followed", async () => {
    const leaf = await leafWith("redirect.test", { ocsp: "/ocsp" });
    responder.answer = (r) =>
      r.path === "/ocsp" ? { status: 302, headers: { location: `${responder.url}/elsewhere` } } : { body: ocspAnswer({ leaf, issuer: ca, status: { good: true } }) };
    await expectUnavailable(leaf, /HTTP 302/);
    expect(responder.requests.some((r) => r.path === "/elsewhere")).toBe(false);
  });

  test("an OCSP or CRL URL at a private address is refused without connecting", async () => {
    const leaf = await leafWith("private.test", { ocsp: "/private-ocsp", crl: "/private.crl" });
    const before = responder.requests.length;
    await expectUnavailable(leaf, /loopback address, which certkeeper does not connect to/, { allowPrivateTargets: false });
    expect(responder.requests.length).toBe(before);
  });
});

describe("revocation: CRLs that must not be believed", () => {
  test("a CRL signed by another CA, an expired CRL, a CRL of another issuer, garbage", async () => {
    const leaf = await leafWith("crl-bad.test", { crl: "/bad.crl" });
    const revoked = [{ serial: leaf.cert.serialNumber }];
    responder.answer = async () => ({ body: await crl({ issuer: ca, signer: otherCa, revoked }) });
    await expectUnavailable(leaf, /signature does not verify/);
    responder.answer = async () => ({ body: await crl({ issuer: ca, revoked, thisUpdate: new Date(Date.now() - 9 * 86_400_000), nextUpdate: new Date(Date.now() - 86_400_000) }) });
    await expectUnavailable(leaf, /out of date/);
    responder.answer = async () => ({ body: await crl({ issuer: otherCa, revoked }) });
    await expectUnavailable(leaf, /another issuer/);
    responder.answer = () => ({ body: "not a crl" });
    await expectUnavailable(leaf, /not a DER certificate revocation list/);
  });
});
