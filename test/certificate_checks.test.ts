/**
 * Certificates retrieved from real TLS servers presenting generated chains: every field's exact
 * value and every status, through the API (add, then get).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createIntermediateCa, createLeaf, createRootCa, DAY, type Issued } from "./support/pki.ts";
import { FakeClock } from "./support/fake_clock.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
const servers: TlsTestServer[] = [];

beforeAll(async () => {
  h = await createHarness();
});

afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(leaf: Issued, ...intermediates: Issued[]): Promise<number> {
  const server = await startTlsServer({ cert: chainPem(leaf, ...intermediates), key: leaf.keyPem });
  servers.push(server);
  return server.port;
}

/** Adds `domain:port` and returns what GET shows. */
async function addAndGet(domain: string, port: number): Promise<any> {
  const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
  return expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
}

const iso = (ms: number) => new Date(ms).toISOString();

/** SHA-256 of the DER, upper-case hex pairs joined by ':' (CONTRACT §11), computed independently. */
function fingerprint(issued: Issued): string {
  return new Bun.CryptoHasher("sha256").update(new Uint8Array(issued.cert.rawData)).digest("hex").toUpperCase().match(/../g)!.join(":");
}

function serialOf(issued: Issued): string {
  return issued.cert.serialNumber.toUpperCase().replace(/^00(?=[89A-F])/, "").match(/../g)!.join(":");
}

describe("a valid RSA-2048 certificate sent with its intermediate", () => {
  test("get() shows every field exactly", async () => {
    const { rsaIntermediate } = await testPki();
    const notBefore = new Date(Date.now() - 10 * DAY);
    const notAfter = new Date(Date.now() + 90 * DAY + 3_600_000);
    const domain = `valid.${TEST_DOMAIN}`;
    const leaf = await createLeaf({
      issuer: rsaIntermediate,
      keyType: "rsa",
      dnsNames: [domain, `www.${domain}`],
      serial: "0a1b2c3d",
      notBefore,
      notAfter,
    });
    const port = await serve(leaf, rsaIntermediate);
    const cert = await addAndGet(domain, port);
    const notBeforeSecond = Math.floor(notBefore.getTime() / 1000) * 1000;
    const notAfterSecond = Math.floor(notAfter.getTime() / 1000) * 1000;
    expect(cert).toEqual({
      id: expect.stringMatching(/^cert_[0-9A-Za-z]{16,}$/),
      domain,
      name: domain,
      status: "valid",
      daysUntilExpiry: 90,
      expiresAt: iso(notAfterSecond),
      issuedAt: iso(notBeforeSecond),
      issuer: "certkeeper intermediates",
      subject: domain,
      subjectAlternativeNames: [domain, `www.${domain}`],
      serialNumber: "0A:1B:2C:3D",
      signatureAlgorithm: "sha256WithRSAEncryption",
      port,
      alertThresholds: [30, 14, 7, 3, 1],
      lastCheckedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      createdAt: cert.lastCheckedAt,
      updatedAt: cert.lastCheckedAt,
      chain: [
        {
          subject: domain,
          issuer: "certkeeper Test RSA CA",
          validFrom: iso(notBeforeSecond),
          validTo: iso(notAfterSecond),
          serialNumber: "0A:1B:2C:3D",
          fingerprintSha256: fingerprint(leaf),
          daysUntilExpiry: 90,
        },
        {
          subject: "certkeeper Test RSA CA",
          issuer: "certkeeper Test Root CA",
          validFrom: rsaIntermediate.cert.notBefore.toISOString(),
          validTo: rsaIntermediate.cert.notAfter.toISOString(),
          serialNumber: serialOf(rsaIntermediate),
          fingerprintSha256: fingerprint(rsaIntermediate),
          daysUntilExpiry: Math.floor((rsaIntermediate.cert.notAfter.getTime() - Date.now()) / DAY),
        },
      ],
      statusReason: null,
      // The leaf names neither an OCSP responder nor a CRL.
      revocation: { status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null },
      tags: [],
      mutedUntil: null,
      protocol: "tls",
      connectTo: null,
      mailDomain: null,
      endpoints: [
        {
          address: "127.0.0.1",
          status: "valid",
          statusReason: null,
          serialNumber: "0A:1B:2C:3D",
          fingerprintSha256: fingerprint(leaf),
          expiresAt: iso(notAfterSecond),
          lastCheckedAt: cert.lastCheckedAt,
          dane: null,
        },
      ],
      // The intermediate expires before the root that anchors the path.
      chainExpiresAt: rsaIntermediate.cert.notAfter.toISOString(),
      publicKey: { algorithm: "RSA", size: 2048, curve: null },
      tls: { protocol: "TLSv1.3", cipher: expect.stringMatching(/^TLS_(AES_128_GCM_SHA256|AES_256_GCM_SHA384|CHACHA20_POLY1305_SHA256)$/) },
      warnings: [],
      alertPolicy: "days",
      // No renewal information from this CA: three quarters of the lifetime.
      renewal: {
        deadline: iso(notBeforeSecond + Math.ceil(((notAfterSecond - notBeforeSecond) * 3) / 4)),
        source: "lifetime",
        window: null,
        explanationUrl: null,
        state: "not_due",
        checkedAt: null,
      },
      deployment: null,
    });
  });
});

describe("statuses", () => {
  test("an ECDSA P-256 leaf from an ECDSA intermediate is valid, signed ecdsa-with-SHA256", async () => {
    const { ecIntermediate } = await testPki();
    const domain = `ecdsa.${TEST_DOMAIN}`;
    const port = await serve(await createLeaf({ issuer: ecIntermediate, keyType: "ec", dnsNames: [domain] }), ecIntermediate);
    const cert = await addAndGet(domain, port);
    expect([cert.status, cert.statusReason, cert.signatureAlgorithm]).toEqual(["valid", null, "ecdsa-with-SHA256"]);
  });

  test("a certificate 5 days from expiry is expiring (expiring_soon)", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `soon.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() + 5 * DAY + 3_600_000) });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect([cert.status, cert.statusReason, cert.daysUntilExpiry]).toEqual(["expiring", "expiring_soon", 5]);
  });

  test("an expired certificate is still read and stored, as expired with negative days", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `expired.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(Date.now() - 2 * DAY + 3_600_000) });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect([cert.status, cert.statusReason, cert.daysUntilExpiry]).toEqual(["expired", "expired", -2]);
  });

  test("a certificate not yet valid is invalid (not_yet_valid)", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `future.${TEST_DOMAIN}`;
    const leaf = await createLeaf({
      issuer: rsaIntermediate,
      dnsNames: [domain],
      notBefore: new Date(Date.now() + 2 * DAY),
      notAfter: new Date(Date.now() + 100 * DAY),
    });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect([cert.status, cert.statusReason]).toEqual(["invalid", "not_yet_valid"]);
  });

  test("a self-signed certificate is invalid (self_signed), its chain one entry naming itself", async () => {
    const domain = `selfsigned.${TEST_DOMAIN}`;
    const cert = await addAndGet(domain, await serve(await createLeaf({ dnsNames: [domain] })));
    expect([cert.status, cert.statusReason, cert.issuer, cert.chain.length]).toEqual(["invalid", "self_signed", domain, 1]);
    expect(cert.chain[0].issuer).toBe(domain);
  });

  test("a certificate for another host is invalid (hostname_mismatch)", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `wronghost.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`other.${TEST_DOMAIN}`] });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect([cert.status, cert.statusReason, cert.subject]).toEqual(["invalid", "hostname_mismatch", `other.${TEST_DOMAIN}`]);
  });

  test("a wildcard certificate covers one level of subdomain", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `api.wild.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.wild.${TEST_DOMAIN}`] });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect([cert.status, cert.subject]).toEqual(["valid", `*.wild.${TEST_DOMAIN}`]);
  });

  test("a certificate from an untrusted CA is invalid (untrusted_issuer)", async () => {
    const { strangerRoot } = await testPki();
    const domain = `untrusted.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: strangerRoot, dnsNames: [domain] });
    const cert = await addAndGet(domain, await serve(leaf));
    expect([cert.status, cert.statusReason, cert.issuer]).toEqual(["invalid", "untrusted_issuer", "Nobody trusts me"]);
  });

  test("a leaf whose server omits the intermediate has no path to the root: untrusted_issuer", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `nointermediate.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
    const cert = await addAndGet(domain, await serve(leaf));
    expect([cert.status, cert.statusReason, cert.chain.length]).toEqual(["invalid", "untrusted_issuer", 1]);
  });

  test("an expired certificate that is also self-signed is expired first", async () => {
    const domain = `expiredself.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ dnsNames: [domain], notAfter: new Date(Date.now() - DAY) });
    const cert = await addAndGet(domain, await serve(leaf));
    expect([cert.status, cert.statusReason]).toEqual(["expired", "expired"]);
  });
});

describe("field formats", () => {
  test("a 20-byte serial with the high bit set loses DER's sign byte", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `serial.${TEST_DOMAIN}`;
    const serial = "ff0102030405060708090a0b0c0d0e0f10111213";
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], serial });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect(cert.serialNumber).toBe("FF:01:02:03:04:05:06:07:08:09:0A:0B:0C:0D:0E:0F:10:11:12:13");
  });

  test("subjectAlternativeNames lists DNS names and IP addresses in certificate order", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `sans.${TEST_DOMAIN}`;
    const leaf = await createLeaf({
      issuer: rsaIntermediate,
      dnsNames: [domain, `alt.${TEST_DOMAIN}`],
      ipAddresses: ["127.0.0.1", "2001:db8::1"],
    });
    const cert = await addAndGet(domain, await serve(leaf, rsaIntermediate));
    expect(cert.subjectAlternativeNames).toEqual([domain, `alt.${TEST_DOMAIN}`, "127.0.0.1", "2001:db8::1"]);
  });

  test("a subject without a common name is named by its first DNS name; an issuer without O by its CN", async () => {
    const { root } = await testPki();
    const domain = `nocn.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: root, subject: "O=Acme Corp", dnsNames: [domain] });
    const cert = await addAndGet(domain, await serve(leaf));
    expect([cert.subject, cert.issuer, cert.chain[0].subject]).toEqual([domain, "certkeeper tests", "Acme Corp"]);
  });

  test("the chain lists what the server sent, leaf first, and not the trusted root it did not send", async () => {
    const { rsaIntermediate, root } = await testPki();
    const domain = `fullchain.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
    const withRoot = await addAndGet(domain, await serve(leaf, rsaIntermediate, root));
    expect(withRoot.chain.map((c: any) => c.subject)).toEqual([domain, "certkeeper Test RSA CA", "certkeeper Test Root CA"]);
    expect(withRoot.status).toBe("valid");
  });
});

describe("the path to a trusted root", () => {
  test("a certificate signed by a leaf (not a CA) is untrusted_issuer, even with a trusted root above", async () => {
    const { rsaIntermediate } = await testPki();
    const parent = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`parent.${TEST_DOMAIN}`] });
    const domain = `notaca.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: parent, dnsNames: [domain] });
    const cert = await addAndGet(domain, await serve(leaf, parent, rsaIntermediate));
    expect([cert.status, cert.statusReason]).toEqual(["invalid", "untrusted_issuer"]);
  });

  test("a path through an expired intermediate is untrusted_issuer", async () => {
    const { root } = await testPki();
    const expired = await createIntermediateCa(root, { name: "CN=Expired CA", notBefore: new Date(Date.now() - 400 * DAY), notAfter: new Date(Date.now() - DAY) });
    const domain = `expiredca.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: expired, dnsNames: [domain] });
    const cert = await addAndGet(domain, await serve(leaf, expired));
    expect([cert.status, cert.statusReason]).toEqual(["invalid", "untrusted_issuer"]);
  });

  test("an unchanged chain is judged again once its intermediate expires; before, the leaf is expiring (chain_expiring)", async () => {
    const { root } = await testPki();
    const clock = new FakeClock(Date.now());
    const own = await createHarness({ clock });
    const shortLived = await createIntermediateCa(root, { name: "CN=Short-lived CA", notAfter: new Date(Date.now() + 10 * DAY) });
    const domain = `shortca.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: shortLived, dnsNames: [domain], daysLeft: 90 });
    const port = await serve(leaf, shortLived);
    const added = expectData(await own.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
    const before = expectData(await own.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect([before.status, before.statusReason, before.chainExpiresAt]).toEqual(["expiring", "chain_expiring", shortLived.cert.notAfter.toISOString()]);
    clock.advance(11 * DAY);
    const later = expectData(await own.request("POST", `/v1/certificates/${added.id}/check`), 200);
    expect([later.status, later.statusReason]).toEqual(["invalid", "untrusted_issuer"]);
    expect(expectData(await own.request("GET", `/v1/certificates/${added.id}`), 200).statusReason).toBe("untrusted_issuer");
    await own.close();
  });
});

describe("one chain served for many names", () => {
  test("each name is judged on its own: those the wildcard covers are valid, another is hostname_mismatch, a forged look-alike untrusted", async () => {
    const { rsaIntermediate, root } = await testPki();
    const wildcard = `*.many.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [wildcard] });
    const port = await serve(leaf, rsaIntermediate);
    // Added at once, as an import or a script adding its names does.
    const names = Array.from({ length: 12 }, (_, i) => `site${i}.many.${TEST_DOMAIN}`);
    const added = await Promise.all(names.map((name) => addAndGet(name, port)));
    expect(added.map((cert) => [cert.domain, cert.status, cert.subject, cert.serialNumber])).toEqual(names.map((name) => [name, "valid", wildcard, serialOf(leaf)]));
    // The same chain, for a name it does not cover.
    const other = await addAndGet(`elsewhere.${TEST_DOMAIN}`, port);
    expect([other.status, other.statusReason, other.serialNumber]).toEqual(["invalid", "hostname_mismatch", serialOf(leaf)]);
    // A look-alike: a root and an intermediate named as the trusted ones, with keys of their own.
    const rogueRoot = await createRootCa({ name: root.cert.subject });
    const rogueIntermediate = await createIntermediateCa(rogueRoot, { name: rsaIntermediate.cert.subject });
    const forged = await createLeaf({ issuer: rogueIntermediate, dnsNames: [wildcard] });
    const cert = await addAndGet(`forged.many.${TEST_DOMAIN}`, await serve(forged, rogueIntermediate));
    expect([cert.status, cert.statusReason, cert.issuer]).toEqual(["invalid", "untrusted_issuer", added[0].issuer]);
  });
});
