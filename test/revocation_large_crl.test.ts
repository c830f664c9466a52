/**
 * A large CRL is read (RFC 5280 §5): a CA's CRL, or a shard of Let's Encrypt's, lists thousands of
 * serials. The ASN.1 library refuses more than 10,000 nodes a parse (some 3,300 entries), and such a
 * CRL made every leaf of its CA `unavailable` at every check, downloaded again each time. A CRL of
 * 4,000 entries answers: revoked, with its date and reason, for a serial it lists near its end; good
 * for one it does not list; and one download serves both.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createIntermediateCa, createLeaf, createRootCa, type Issued } from "./support/pki.ts";
import { crl, startResponder, type Responder } from "./support/revocation.ts";
import { checkerFor } from "./support/revocation_harness.ts";

let ca: Issued;
let responder: Responder;

beforeAll(async () => {
  ca = await createIntermediateCa(await createRootCa());
  responder = await startResponder();
});
afterAll(() => responder.close());

test("a CRL of 4,000 entries: the serial it lists near its end is revoked, with its date and reason; another is good", async () => {
  const listed = "5c0ffee0000000000000000000000fa0";
  const revokedAt = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 1000) * 1000);
  const revoked = Array.from({ length: 3999 }, (_, i) => ({ serial: `4a${(i + 1).toString(16).padStart(30, "0")}`, reason: i % 2 === 0 ? 4 : undefined }));
  revoked.push({ serial: listed, reason: 1 });
  const body = await crl({ issuer: ca, revoked: revoked.map((entry) => (entry.serial === listed ? { ...entry, at: revokedAt } : entry)) });
  expect(body.length).toBeGreaterThan(60_000);
  let downloads = 0;
  responder.answer = (request) => {
    if (request.path !== "/large.crl") return { status: 404 };
    downloads++;
    return { body };
  };
  const { ask, close } = checkerFor();
  try {
    const leaf = await createLeaf({ issuer: ca, dnsNames: ["listed.test"], serial: listed, crlUrls: [`${responder.url}/large.crl`] });
    expect(await ask(leaf, ca)).toMatchObject({ status: "revoked", source: "crl", reason: "keyCompromise", revokedAt: revokedAt.getTime() });
    const other = await createLeaf({ issuer: ca, dnsNames: ["unlisted.test"], serial: "5c0ffee0000000000000000000000fa1", crlUrls: [`${responder.url}/large.crl`] });
    expect(await ask(other, ca)).toMatchObject({ status: "good", source: "crl" });
    expect(downloads).toBe(1);
  } finally {
    await close();
  }
});
