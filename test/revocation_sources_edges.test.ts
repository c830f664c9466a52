/**
 * Revocation answers that must not be believed, and sources that must still be asked (CONTRACT §14;
 * RFC 6960 §4.2.2.2, §4.1.1; RFC 5280 §5.3.1): each test fails on a one-line change of
 * core/revocation the rest of the suite let pass. An OCSP answer is about this issuer only when both
 * its name hash and its key hash are the issuer's; a delegated responder counts only when the issuer
 * really signed its certificate and it is current; an answer dated more than the clock skew ahead is
 * refused; reason codes past certificateHold keep their names; `unknown` from OCSP still asks the CRL;
 * a CRL kept past its nextUpdate is fetched again; a second responder is asked when the first fails; a
 * certificate naming only non-HTTP sources is not_checked; answers are kept per issuer and serial, and a
 * CRL verified for one issuer answers nothing for another of the same name; the leaf's issuer is the
 * sent certificate that signed it, not the first of that name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor, memoryCache } from "./support/revocation_harness.ts";
import { askAboutChain } from "../core/revocation/mod.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { Certificate } from "../core/tls/x509.ts";

const DAY = 86_400_000;
const OCSP_SIGNING = "1.3.6.1.5.5.7.3.9";
let root: Issued;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  root = await createRootCa({ name: "CN=Test Revocation Root, O=certkeeper tests" });
  ca = await createIntermediateCa(root, { name: "CN=Test Revocation CA, O=certkeeper tests" });
  responder = await startResponder();
});
afterAll(() => responder.close());

/** A CA certificate for `keys` under another name (what a CertID of another issuer name hashes). */
async function renamed(name: string, keys: CryptoKeyPair): Promise<Issued> {
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: "7e01",
    subject: name,
    issuer: root.cert.subject,
    notBefore: new Date(Date.now() - 10 * DAY),
    notAfter: new Date(Date.now() + 100 * DAY),
    publicKey: keys.publicKey,
    signingKey: root.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
    extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
  });
  return { cert, keys, certPem: cert.toString("pem"), keyPem: "" };
}

async function run<T>(fn: (tools: ReturnType<typeof checkerFor>) => Promise<T>, cache = memoryCache()): Promise<T> {
  const tools = checkerFor({ cache });
  try {
    return await fn(tools);
  } finally {
    await tools.close();
  }
}

describe("OCSP answers about this issuer, signed by it or by a responder it really delegated", () => {
  test("an answer whose CertID carries another issuer name's hash (same key) is about another certificate", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["name-hash.test"], ocspUrls: [`${responder.url}/name-hash`] });
    const otherName = await renamed("CN=Some Other CA Name, O=certkeeper tests", ca.keys);
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: otherName, signer: ca, status: { revoked: { at: new Date(Date.now() - DAY) } } }) });
    await run(async ({ ask, failures }) => {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/about another certificate/);
    });
  });

  test("an answer whose CertID carries another key's hash (same issuer name, a re-keyed CA) is about another certificate", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["key-hash.test"], ocspUrls: [`${responder.url}/key-hash`] });
    const rekeyed = await createIntermediateCa(root, { name: ca.cert.subject });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: rekeyed, signer: ca, status: { revoked: { at: new Date(Date.now() - DAY) } } }) });
    await run(async ({ ask, failures }) => {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/about another certificate/);
    });
  });

  test("a 'delegated responder' naming the issuer but signed by another key is not believed", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["forged-delegate.test"], ocspUrls: [`${responder.url}/forged`] });
    const impostorCa = await createIntermediateCa(root, { name: ca.cert.subject }); // the same name, the attacker's key
    const forged = await createLeaf({ issuer: impostorCa, subject: "CN=Forged OCSP Responder", dnsNames: [], extendedKeyUsages: [OCSP_SIGNING], freshKey: true });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: forged, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    await run(async ({ ask, failures }) => {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/not signed by the issuer or a responder it delegated/);
    });
  });

  test("a delegated responder whose certificate has expired is not believed; a current one is", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["expired-delegate.test"], ocspUrls: [`${responder.url}/expired-delegate`] });
    const expired = await createLeaf({
      issuer: ca,
      subject: "CN=Expired OCSP Responder",
      dnsNames: [],
      extendedKeyUsages: [OCSP_SIGNING],
      notBefore: new Date(Date.now() - 60 * DAY),
      notAfter: new Date(Date.now() - DAY),
      freshKey: true,
    });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: expired, status: { good: true } }) });
    await run(async ({ ask, failures }) => {
      expect((await ask(leaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/not signed by the issuer or a responder it delegated/);
    });
    const current = await createLeaf({ issuer: ca, subject: "CN=Current OCSP Responder", dnsNames: [], extendedKeyUsages: [OCSP_SIGNING], freshKey: true });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, signer: current, status: { good: true } }) });
    await run(async ({ ask }) => expect((await ask(leaf, ca)).status).toBe("good"));
  });

  test("an answer dated an hour ahead is refused; two minutes ahead is within the clock skew", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["ahead.test"], ocspUrls: [`${responder.url}/ahead`] });
    const now = Date.now();
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(now + 3_600_000), nextUpdate: new Date(now + 2 * DAY) }) });
    await run(async ({ ask, failures }) => {
      expect((await ask(leaf, ca, { now })).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/dated in the future/);
    });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(now + 120_000), nextUpdate: new Date(now + 2 * DAY) }) });
    await run(async ({ ask }) => expect((await ask(leaf, ca, { now })).status).toBe("good"));
  });

  test("reasons privilegeWithdrawn (9) and aACompromise (10) keep their names", async () => {
    for (const [code, name] of [[9, "privilegeWithdrawn"], [10, "aACompromise"]] as const) {
      const leaf = await createLeaf({ issuer: ca, dnsNames: [`reason-${code}.test`], ocspUrls: [`${responder.url}/reason-${code}`] });
      responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: code } } }) });
      await run(async ({ ask }) => expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", reason: name }));
    }
  });
});

describe("which sources are asked", () => {
  test("unknown from the OCSP responder still asks the CRL, which says revoked", async () => {
    const serial = "5a0102030405060708";
    const leaf = await createLeaf({ issuer: ca, serial, dnsNames: ["unknown-then-crl.test"], ocspUrls: [`${responder.url}/u-ocsp`], crlUrls: [`${responder.url}/u.crl`] });
    const list = await crl({ issuer: ca, revoked: [{ serial, reason: 1 }] });
    responder.answer = (request) => (request.path === "/u-ocsp" ? { body: ocspAnswer({ leaf, issuer: ca, status: { unknown: true } }) } : { body: list });
    await run(async ({ ask }) => expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise" }));
  });

  test("a second OCSP responder is asked when the first fails", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["second-responder.test"], ocspUrls: [`${responder.url}/down`, `${responder.url}/up`] });
    responder.answer = (request) =>
      request.path === "/down" ? { status: 503 } : { body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY) } } }) };
    await run(async ({ ask }) => expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "ocsp" }));
  });

  test("a certificate whose only CRL is an LDAP URL names no source certkeeper asks: not_checked", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["ldap-only.test"], crlUrls: ["ldap://127.0.0.1/cn=Test%20CA?certificateRevocationList"] });
    await run(async ({ ask }) => expect((await ask(leaf, ca)).status).toBe("not_checked"));
  });

  test("a CRL kept in memory is fetched again once its nextUpdate has passed", async () => {
    const t0 = Date.now();
    const first = await createLeaf({ issuer: ca, dnsNames: ["kept-1.test"], crlUrls: [`${responder.url}/kept.crl`] });
    const later = await createLeaf({ issuer: ca, serial: "5b0102030405060708", dnsNames: ["kept-2.test"], crlUrls: [`${responder.url}/kept.crl`] });
    let body = await crl({ issuer: ca, thisUpdate: new Date(t0 - 60_000), nextUpdate: new Date(t0 + DAY) });
    responder.answer = () => ({ body });
    await run(async ({ ask }) => {
      expect((await ask(first, ca, { now: t0 })).status).toBe("good");
      const t1 = t0 + 2 * DAY;
      body = await crl({ issuer: ca, revoked: [{ serial: "5b0102030405060708", at: new Date(t1 - DAY) }], thisUpdate: new Date(t1 - 60_000), nextUpdate: new Date(t1 + DAY) });
      expect((await ask(later, ca, { now: t1 })).status).toBe("revoked");
    });
  });
});

describe("answers are about one issuer", () => {
  test("two issuers' leaves with the same serial get their own answers (cached per issuer and serial)", async () => {
    const otherCa = await createIntermediateCa(root, { name: "CN=Test Other CA, O=certkeeper tests" });
    const serial = "5c0102030405060708";
    const mine = await createLeaf({ issuer: ca, serial, dnsNames: ["same-serial-1.test"], ocspUrls: [`${responder.url}/s1`] });
    const theirs = await createLeaf({ issuer: otherCa, serial, dnsNames: ["same-serial-2.test"], ocspUrls: [`${responder.url}/s2`] });
    responder.answer = (request) =>
      request.path === "/s1"
        ? { body: ocspAnswer({ leaf: mine, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY) } } }) }
        : { body: ocspAnswer({ leaf: theirs, issuer: otherCa, status: { good: true } }) };
    const cache = memoryCache();
    await run(async ({ ask }) => {
      expect((await ask(mine, ca)).status).toBe("revoked");
      expect((await ask(theirs, otherCa)).status).toBe("good");
    }, cache);
  });

  test("a CRL verified for one CA is not taken for another CA of the same name that did not sign it", async () => {
    const rekeyed = await createIntermediateCa(root, { name: ca.cert.subject });
    const url = `${responder.url}/shared-name.crl`;
    const oldLeaf = await createLeaf({ issuer: ca, serial: "5d0102030405060708", dnsNames: ["old-key.test"], crlUrls: [url] });
    const newLeaf = await createLeaf({ issuer: rekeyed, serial: "5d0102030405060709", dnsNames: ["new-key.test"], crlUrls: [url] });
    // The list at the URL is the new key's: it says nothing the old key's CA signed.
    const list = await crl({ issuer: rekeyed, revoked: [{ serial: "5d0102030405060708" }] });
    responder.answer = () => ({ body: list });
    await run(async ({ ask, failures }) => {
      expect((await ask(newLeaf, rekeyed)).status).toBe("good");
      expect((await ask(oldLeaf, ca)).status).toBe("unavailable");
      expect(failures.join("\n")).toMatch(/signature does not verify/);
    });
  });

  test("the leaf's issuer is the sent certificate that signed it, not the first one bearing its name", async () => {
    const impostor = await createIntermediateCa(root, { name: ca.cert.subject });
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["which-issuer.test"], ocspUrls: [`${responder.url}/which`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    const { checker, close } = checkerFor();
    try {
      const certs = [leaf, impostor, ca].map((i) => new Certificate(i.cert.rawData));
      const state = await askAboutChain(checker, { certs, trusted: true, trust: new TrustStore([root.certPem]), now: Date.now() });
      expect(state).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" });
    } finally {
      await close();
    }
  });
});

describe("a stapled answer (where the runtime hands one over)", () => {
  test("a verified stapled answer is used first, source ocsp_stapled, and the responder is not asked; a forged one is set aside", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["stapled-unit.test"], ocspUrls: [`${responder.url}/stapled-unit`] });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { good: true } }) });
    const asked = () => responder.requests.filter((r) => r.path === "/stapled-unit").length;
    const stapled = ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } });
    await run(async ({ ask }) => expect(await ask(leaf, ca, { stapled })).toMatchObject({ status: "revoked", source: "ocsp_stapled", reason: "keyCompromise" }));
    expect(asked()).toBe(0);
    const otherCa = await createIntermediateCa(root, { name: "CN=Test Stapling Forger, O=certkeeper tests" });
    const forged = ocspAnswer({ leaf, issuer: ca, signer: otherCa, status: { revoked: { at: new Date(Date.now() - DAY) } } });
    await run(async ({ ask }) => expect(await ask(leaf, ca, { stapled: forged })).toMatchObject({ status: "good", source: "ocsp" }));
    expect(asked()).toBe(1);
  });

  test("a stapled unknown settles nothing: the responder is asked, as after its own unknown; it stands when the responder has no answer", async () => {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["stapled-unknown.test"], ocspUrls: [`${responder.url}/stapled-unknown`] });
    const stapled = ocspAnswer({ leaf, issuer: ca, status: { unknown: true } });
    responder.answer = () => ({ body: ocspAnswer({ leaf, issuer: ca, status: { revoked: { at: new Date(Date.now() - DAY), reason: 1 } } }) });
    await run(async ({ ask }) => expect(await ask(leaf, ca, { stapled })).toMatchObject({ status: "revoked", source: "ocsp", reason: "keyCompromise" }));
    responder.answer = () => ({ status: 503 });
    await run(async ({ ask }) => expect(await ask(leaf, ca, { stapled })).toMatchObject({ status: "unknown", source: "ocsp_stapled" }));
  });
});
