/**
 * An OCSP answer or a CRL without nextUpdate (RFC 6960 §4.2.2.1: newer information is available at
 * all times; RFC 5280 §5.1.2.5 requires one of every CRL) is current only within 7 days of its
 * thisUpdate (RFC 6960 §3.2: thisUpdate "sufficiently recent"): a year-old signed "good", replayed over
 * plain HTTP from before a revocation, is not believed (`unavailable`, the status unchanged), and a
 * recent one is kept an hour at most, never past those 7 days.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

const DAY = 86_400_000;
const HOUR = 3_600_000;
let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  const root = await createRootCa();
  ca = await createIntermediateCa(root);
  responder = await startResponder();
});
afterAll(() => responder.close());

/** An X.509 CRL without nextUpdate, made `age` ago (the fixture's CRLs always carry one). */
async function crlWithoutNextUpdate(age: number): Promise<Uint8Array> {
  const { x509 } = await import("../core/tls/x509.ts");
  const generated = await x509.X509CrlGenerator.create({
    issuer: ca.cert.subject,
    thisUpdate: new Date(Date.now() - age),
    entries: [],
    signingKey: ca.keys.privateKey,
    signingAlgorithm: { name: "ECDSA", hash: "SHA-256" },
  });
  return new Uint8Array(generated.rawData);
}

for (const [name, serve] of [
  ["OCSP", (leaf: Issued, age: number) => ocspAnswer({ leaf, issuer: ca, status: { good: true }, thisUpdate: new Date(Date.now() - age), nextUpdate: null })],
  ["CRL", (_leaf: Issued, age: number) => crlWithoutNextUpdate(age)],
] as const) {
  test(`${name} without nextUpdate: 400 days old is no answer; 2 days old is good, kept an hour; 7 days less 10 minutes old, kept 10 minutes`, async () => {
    const path = `/${name.toLowerCase()}-${Math.random().toString(36).slice(2)}`;
    const urls = name === "OCSP" ? { ocspUrls: [`${responder.url}${path}`] } : { crlUrls: [`${responder.url}${path}`] };
    let age = 400 * DAY;
    const previous = responder.answer;
    responder.answer = async (request) => (request.path === path ? { body: await serve(leaf, age) } : previous(request));
    const leaf = await createLeaf({ issuer: ca, dnsNames: [`${name.toLowerCase()}.no-next-update.test`], ...urls, notBefore: new Date(Date.now() - 500 * DAY), notAfter: new Date(Date.now() + 30 * DAY) });
    // A fresh cache each time: each answer is judged on its own.
    for (const [given, expected] of [
      [400 * DAY, { status: "unavailable" }],
      [2 * DAY, { status: "good", keptFor: HOUR }],
      [7 * DAY - 10 * 60_000, { status: "good", keptFor: 10 * 60_000 }],
    ] as const) {
      age = given;
      const { ask, close, failures } = checkerFor();
      try {
        const now = Date.now();
        const state = await ask(leaf, ca, { now });
        const keptFor = state.status === "good" ? Math.round(((state as { validUntil: number }).validUntil - now) / 60_000) * 60_000 : undefined;
        expect({ status: state.status, ...(keptFor !== undefined ? { keptFor } : {}) }).toEqual(expected);
        if (expected.status === "unavailable") expect(failures.join(" ")).toContain("no nextUpdate and was made more than 7 days ago");
      } finally {
        await close();
      }
    }
  });
}
