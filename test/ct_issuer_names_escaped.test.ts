/**
 * `allowedIssuers` (CONTRACT §15, applied to the logs source by §21): `authorizedIssuer` is whether
 * the issuer's O or CN equals one of them (case-insensitive). Issuer names are the CA's to write: an
 * O ending in a backslash, or holding quotes, separators or spaces at its ends, is compared as written.
 * The follower keeps the issuer's O and CN, written as one distinguished name and read back whole.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { issueThroughCt } from "./support/ct_certs.ts";
import { createIntermediateCa } from "./support/pki.ts";
import { testPki } from "./support/harness.ts";
import { asIssuance } from "../core/ctlogs/issued.ts";
import { authorizedIssuer, nameAttributes } from "../core/watches/mod.ts";

setDefaultTimeout(60_000);

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

async function issuedBy(name: unknown, domain: string, allowedIssuers: string[]): Promise<any> {
  world = await startCtWorld({ logs: [{ kind: "tiled" }] });
  const w = world;
  await w.caughtUp(0);
  await w.addWatch({ domain, allowedIssuers });
  const { root } = await testPki();
  const ca = await createIntermediateCa(root, { name: name as string });
  // The leaf's issuer is the CA's name as built (the fixture would otherwise re-read its string form).
  const cert = new Proxy(ca.cert, { get: (target, key) => (key === "subject" ? name : Reflect.get(target, key, target)) });
  await issueThroughCt({ issuer: { ...ca, cert } as typeof ca, dnsNames: [domain], logs: w.logs, above: [Buffer.from(root.cert.rawData)] });
  w.publishAll();
  const [event] = await w.until("the event", async () => {
    const events = await w.issued();
    return events.length > 0 ? events : null;
  });
  return event;
}

describe("allowedIssuers against issuer names with odd characters (logs source)", () => {
  test("an issuer whose O ends in a backslash: its CN still counts", async () => {
    const event = await issuedBy([{ CN: ["Acme R1"] }, { O: ["Acme CA\\"] }, { C: ["US"] }], "backslash-issuer.example", ["Acme R1"]);
    expect(event.data.issuer).toBe("Acme CA\\");
    expect(event.data.authorizedIssuer).toBe(true);
  });

  test("every O and CN read back whole from the name the follower writes: specials, quotes, backslashes, spaces at the ends", () => {
    const pairs: Array<[string, string]> = [
      ["Acme CA\\", "Acme R1"],
      ['"Quoted" Trust', '"Acme R2"'],
      ["Example, Inc.; Ltd", "R=11 + <x> #1"],
      [" spaced ", "café"],
    ];
    for (const [o, cn] of pairs) {
      const issuance = asIssuance({ issuerOrganization: o, issuerCommonName: cn, dnsNames: ["a.example"], notBefore: 0, notAfter: 1, fingerprint: null, issuanceKey: "k" } as never);
      expect(nameAttributes(issuance.issuerName!)).toEqual({ o: [o], cn: [cn] });
      expect([authorizedIssuer(issuance, [o.toUpperCase()]), authorizedIssuer(issuance, [cn]), authorizedIssuer(issuance, ["Other"])]).toEqual([true, true, false]);
    }
  });

  test("names as RFC 4514 and Go's RFC 2253 writer give them: escaped commas, quoted values, hex escapes of UTF-8, semicolons", () => {
    expect(nameAttributes("C=US, O=Example\\, Inc., CN=R11")).toEqual({ o: ["Example, Inc."], cn: ["R11"] });
    expect(nameAttributes('CN="Quoted, Name", O=X')).toEqual({ o: ["X"], cn: ["Quoted, Name"] });
    expect(nameAttributes("CN=caf\\C3\\A9, 2.5.4.10=Org")).toEqual({ o: ["Org"], cn: ["café"] });
    expect(nameAttributes("C=US; O=Let's Encrypt; CN=R3")).toEqual({ o: ["Let's Encrypt"], cn: ["R3"] });
  });

  test("a multi-valued RDN (RFC 4514 §2.2: attributes joined by +): each attribute read, an escaped + kept in its value", () => {
    expect(nameAttributes("CN=R11+O=Let's Encrypt,C=US")).toEqual({ o: ["Let's Encrypt"], cn: ["R11"] });
    expect(nameAttributes("O=A\\+B+CN=R1, C=US")).toEqual({ o: ["A+B"], cn: ["R1"] });
    const issuance = { id: "1", dnsNames: ["x.test"], issuerFriendlyName: null, issuerName: "CN=R11+O=Let's Encrypt,C=US", notBefore: 0, notAfter: 1, certSha256: null, tbsSha256: null };
    expect([authorizedIssuer(issuance, ["let's encrypt"]), authorizedIssuer(issuance, ["R11"])]).toEqual([true, true]);
  });
});
