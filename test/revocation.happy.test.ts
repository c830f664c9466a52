import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, requestedSerial, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa();
  ca = await createIntermediateCa(root);
  responder = await startResponder();
});
afterAll(() => responder.close());

describe("revocation: the OCSP responder named by the certificate", () => {
  test("a good answer signed by the issuer is good, from source ocsp", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["good.test"], ocspUrls: [`${responder.url}/ocsp`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true } }), headers: { "content-type": "application/ocsp-response" } });
    const { ask, close } = checkerFor();
    const now = Date.now();
    const state = await ask(leaf, ca, { now });
    expect(state).toEqual({ status: "good", source: "ocsp", checkedAt: now, revokedAt: null, reason: null, validUntil: expect.any(Number) });
    const last = responder.requests.at(-1)!;
    expect(last.method).toBe("POST");
    expect(requestedSerial(last.body)).toBe(leaf.cert.serialNumber.replace(/^00/, ""));
    await close();
  });

  test("a revoked answer tells when and why", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["revoked.test"], ocspUrls: [`${responder.url}/ocsp`] });
    const at = new Date("2026-11-01T10:00:00.000Z");
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at, reason: 1 } } }) });
    const { ask, close } = checkerFor();
    const state = await ask(leaf, ca);
    expect(state.status).toBe("revoked");
    expect(state.source).toBe("ocsp");
    expect(state.revokedAt).toBe(at.getTime());
    expect(state.reason).toBe("keyCompromise");
    await close();
  });

  test("an answer signed by a delegated responder (id-kp-OCSPSigning, issued by the issuer) is accepted", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["delegated.test"], ocspUrls: [`${responder.url}/ocsp`] });
    const delegate = await createLeaf({ issuer: ca, subject: "CN=Test OCSP Responder", dnsNames: [], extendedKeyUsages: ["1.3.6.1.5.5.7.3.9"], freshKey: true });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: delegate, status: { good: true } }) });
    const { ask, close } = checkerFor();
    expect((await ask(leaf, ca)).status).toBe("good");
    await close();
  });

  test("unknown from the responder, with no CRL, is unknown", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["unknown.test"], ocspUrls: [`${responder.url}/ocsp`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { unknown: true } }) });
    const { ask, close } = checkerFor();
    expect((await ask(leaf, ca)).status).toBe("unknown");
    await close();
  });

  test("an answer is cached until nextUpdate: the second check asks nobody", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["cached.test"], ocspUrls: [`${responder.url}/cached`] });
    const nextUpdate = new Date(Date.now() + 3_600_000);
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, nextUpdate }) });
    const { ask, close } = checkerFor();
    const before = responder.requests.filter((r) => r.path === "/cached").length;
    const first = await ask(leaf, ca);
    expect(Math.abs(first.validUntil! - nextUpdate.getTime())).toBeLessThan(1000);
    await ask(leaf, ca);
    await ask(leaf, ca);
    expect(responder.requests.filter((r) => r.path === "/cached").length).toBe(before + 1);
    // Past nextUpdate, the responder is asked again.
    await ask(leaf, ca, { now: nextUpdate.getTime() + 1 }).catch(() => {});
    expect(responder.requests.filter((r) => r.path === "/cached").length).toBe(before + 2);
    await close();
  });

  test("a nextUpdate further than 7 days away is cached 7 days", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["long.test"], ocspUrls: [`${responder.url}/ocsp`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, nextUpdate: new Date(Date.now() + 30 * 86_400_000) }) });
    const { ask, close } = checkerFor();
    const now = Date.now();
    expect((await ask(leaf, ca, { now })).validUntil).toBe(now + 7 * 86_400_000);
    await close();
  });
});

describe("revocation: the CRL when there is no OCSP responder", () => {
  test("a CRL that lists the serial: revoked, with its date and reason", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["crl-revoked.test"], crlUrls: [`${responder.url}/ca.crl`] });
    const at = new Date("2026-10-01T00:00:00.000Z");
    const list = await crl({ issuer: ca, revoked: [{ serial: "0abc" }, { serial: leaf.cert.serialNumber, at, reason: 4 }] });
    responder.answer = (r) => (r.path === "/ca.crl" ? { body: list } : { status: 404 });
    const { ask, close } = checkerFor();
    const state = await ask(leaf, ca);
    expect(state).toMatchObject({ status: "revoked", source: "crl", revokedAt: at.getTime(), reason: "superseded" });
    await close();
  });

  test("a CRL that does not list it: good", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["crl-good.test"], crlUrls: [`${responder.url}/ca.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial: "0abc" }] });
    responder.answer = () => ({ body: list });
    const { ask, close } = checkerFor();
    expect(await ask(leaf, ca)).toMatchObject({ status: "good", source: "crl" });
    await close();
  });

  test("when the OCSP responder fails, the CRL answers", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["fallback.test"], ocspUrls: [`${responder.url}/down`], crlUrls: [`${responder.url}/ca.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial: leaf.cert.serialNumber }] });
    responder.answer = (r) => (r.path === "/ca.crl" ? { body: list } : { status: 503 });
    const { ask, close } = checkerFor();
    expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "crl" });
    await close();
  });

  test("a certificate naming neither is not_checked; an untrusted chain is not asked", async () => {
    const bare = await createLeaf({ issuer: ca, dnsNames: ["bare.test"] });
    const named = await createLeaf({ issuer: ca, dnsNames: ["named.test"], ocspUrls: [`${responder.url}/never`] });
    const { ask, close } = checkerFor();
    expect((await ask(bare, ca)).status).toBe("not_checked");
    expect((await ask(named, ca, { trusted: false })).status).toBe("not_checked");
    expect(responder.requests.some((r) => r.path === "/never")).toBe(false);
    await close();
  });
});

describe("revocation: one CRL download for the certificates of one CA", () => {
  test("a verified CRL is kept until its nextUpdate: two leaves of one CA, one download", async () => {
    const first = await createLeaf({ issuer: ca, dnsNames: ["crl-one.test"], crlUrls: [`${responder.url}/shared.crl`] });
    const second = await createLeaf({ issuer: ca, dnsNames: ["crl-two.test"], crlUrls: [`${responder.url}/shared.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial: second.cert.serialNumber }] });
    responder.answer = (r) => (r.path === "/shared.crl" ? { body: list } : { status: 404 });
    const { ask, close } = checkerFor();
    const before = responder.requests.filter((r) => r.path === "/shared.crl").length;
    expect((await ask(first, ca)).status).toBe("good");
    expect((await ask(second, ca)).status).toBe("revoked");
    expect(responder.requests.filter((r) => r.path === "/shared.crl").length).toBe(before + 1);
    await close();
  });
});
