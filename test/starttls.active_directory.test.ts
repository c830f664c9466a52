/**
 * LDAP StartTLS as Active Directory answers it (CONTRACT §12): AD writes every BER length in the
 * four-octet long form (`30 84 00 00 00 28 02 01 01 78 84 00 00 00 1f 0a 01 00 …`). X.690 §8.1.3.5
 * allows any number of length octets, and RFC 4511 §5.1 forbids only the indefinite form: the upgrade
 * goes on and the certificate behind it is read.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import net from "node:net";
import tls from "node:tls";
import { chainPem, createLeaf } from "./support/pki.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { retrieveEndpoints } from "../core/tls/endpoint_retrieve.ts";

const DOMAIN = `ad.${TEST_DOMAIN}`;
const OID = "1.3.6.1.4.1.1466.20037";
const closers: Array<() => void> = [];
let port = 0;

/** An ExtendedResponse (success, with responseName) in AD's encoding: 4-octet lengths. */
function adStartTlsResponse(): Buffer {
  const long = (n: number) => Buffer.from([0x84, (n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
  const name = Buffer.concat([Buffer.from([0x8a, OID.length]), Buffer.from(OID, "latin1")]);
  const op = Buffer.concat([Buffer.from([0x0a, 0x01, 0x00, 0x04, 0x00, 0x04, 0x00]), name]);
  const body = Buffer.concat([Buffer.from([0x02, 0x01, 0x01, 0x78]), long(op.length), op]);
  return Buffer.concat([Buffer.from([0x30]), long(body.length), body]);
}

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [DOMAIN] });
  const tlsSide = tls.createServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }, (s) => {
    s.on("error", () => {});
    s.end();
  });
  tlsSide.on("tlsClientError", () => {});
  await new Promise<void>((r) => tlsSide.listen(0, "127.0.0.1", () => r()));
  const tlsPort = (tlsSide.address() as net.AddressInfo).port;
  const plain = net.createServer((socket) => {
    socket.on("error", () => {});
    socket.once("data", () => {
      socket.write(adStartTlsResponse());
      socket.pause();
      const relay = net.connect(tlsPort, "127.0.0.1", () => {
        socket.pipe(relay);
        relay.pipe(socket);
      });
      relay.on("error", () => socket.destroy());
      socket.on("close", () => relay.destroy());
    });
  });
  await new Promise<void>((r) => plain.listen(0, "127.0.0.1", () => r()));
  port = (plain.address() as net.AddressInfo).port;
  closers.push(() => plain.close(), () => tlsSide.close());
});
afterAll(() => closers.forEach((close) => close()));

test("an Active Directory style StartTLS answer (4-octet BER lengths) upgrades and yields the certificate", async () => {
  expect(adStartTlsResponse().subarray(0, 16).toString("hex")).toBe("30840000002802010178840000001f0a");
  const [endpoint] = await retrieveEndpoints(DOMAIN, port, { timeoutMs: 2000, protocol: "ldap", rules: [{ pattern: DOMAIN, address: "127.0.0.1" }], allowPrivateTargets: true });
  expect(endpoint).toMatchObject({ address: "127.0.0.1", ok: true });
});
