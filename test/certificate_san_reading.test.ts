/**
 * The subject alternative names are read from their DER (the ASN.1 library's typed reading costs about
 * 20 µs a name, a second of the event loop for a hostile leaf's thousands): what is read is what the
 * library reads, DNS names and IP addresses in certificate order, whatever their bytes (upper case,
 * bytes over 0x7f, IPv4, IPv6 with and without runs of zeros, an odd length), other kinds of names
 * left out.
 */
import { expect, test } from "bun:test";
import "reflect-metadata";
import * as x509 from "@peculiar/x509";
import { alternativeNames, dnsNames, parseCertificates } from "../core/tls/mod.ts";
import { testPki } from "./support/harness.ts";
import { basicConstraints, CN, dn, dnsName, forge, ipName, sanExt, tlv, utcTime } from "./support/forged_certs.ts";

/** What the library's own typed reading of the extension gives. */
function libraryNames(der: Uint8Array): { all: string[]; dns: string[] } {
  const cert = new x509.X509Certificate(new Uint8Array(der));
  const items = cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items ?? [];
  return {
    all: items.filter((item) => item.type === "dns" || item.type === "ip").map((item) => item.value),
    dns: items.filter((item) => item.type === "dns").map((item) => item.value),
  };
}

test("DNS names and IP addresses of every shape are read as the ASN.1 library reads them", async () => {
  const { rsaIntermediate } = await testPki();
  const names = [
    dnsName("www.example.com"),
    dnsName("UPPER.Example.COM."),
    tlv(0x82, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x80, 0x2e, 0x74, 0x65, 0x73, 0x74])), // bytes over 0x7f
    ipName(Buffer.from([192, 0, 2, 7])),
    ipName(Buffer.from("20010db8000000000000000000000001", "hex")),
    ipName(Buffer.from("fe800000000000000202b3fffe1e8329", "hex")),
    ipName(Buffer.from("00000000000000000000000000000000", "hex")),
    tlv(0x81, Buffer.from("hostmaster@example.com")), // rfc822Name: not a name certkeeper shows
    tlv(0x86, Buffer.from("https://example.com/")), // URI: neither
    dnsName("*.wild.example"),
    ipName(Buffer.from([10, 0, 0, 1, 255, 255, 255, 0])), // an address and mask, as in name constraints
  ];
  const leaf = await forge({ issuer: rsaIntermediate, subject: dn([CN, "shapes.example"]), notBefore: utcTime("250101000000Z"), notAfter: utcTime("491231235959Z"), extensions: [basicConstraints(false), sanExt(...names)] });
  const der = new Uint8Array(leaf.der);
  const [cert] = parseCertificates([der]);
  const expected = libraryNames(der);
  expect(expected.all).toHaveLength(9);
  expect(alternativeNames(cert!)).toEqual(expected.all);
  expect(dnsNames(cert!)).toEqual(expected.dns);
});

test("a leaf of 9,500 names: every one read, in order, as the library reads them", async () => {
  const { rsaIntermediate } = await testPki();
  const names = Array.from({ length: 9500 }, (_, i) => dnsName(`n${i}.many.example`));
  const leaf = await forge({ issuer: rsaIntermediate, subject: dn([CN, "many.example"]), notBefore: utcTime("250101000000Z"), notAfter: utcTime("491231235959Z"), extensions: [sanExt(...names)] });
  const der = new Uint8Array(leaf.der);
  expect(dnsNames(parseCertificates([der])[0]!)).toEqual(libraryNames(der).dns);
});
