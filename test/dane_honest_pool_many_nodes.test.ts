/**
 * An honest mail host whose sixteen addresses each serve their own leaf (one certbot per node) under
 * one intermediate, published as RFC 7671 §5.2.2 recommends when the trust anchor is not sent ("2 1 0":
 * the root's whole key), costs a few signature checks a chain: each distinct chain has its own bound,
 * so every endpoint matches (CONTRACT §22, DANE per endpoint), none judged `mismatch` for the pool's size.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { SMTPServer } from "smtp-server";
import * as dnsPacket from "dns-packet";
import { chainPem, createLeaf } from "./support/pki.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { answerTo, startFixtureDns } from "./support/dns_servers.ts";
import { dnsWorld } from "./support/dns_world.ts";

setDefaultTimeout(120_000);
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const ADDRESSES = Array.from({ length: 16 }, (_, i) => `127.0.0.${i + 1}`);

test("16 addresses, each its own leaf under one intermediate, a '2 1 0' record of the unsent root: every endpoint matches", async () => {
  const { root, rsaIntermediate } = await testPki();
  const host = `dane-pool.${TEST_DOMAIN}`;
  let port = 0;
  for (const address of ADDRESSES) {
    const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [host], daysLeft: 60 });
    const smtp = new SMTPServer({ secure: false, key: leaf.keyPem, cert: chainPem(leaf, rsaIntermediate), authOptional: true, logger: false });
    await new Promise<void>((resolve) => smtp.listen(port, address, () => resolve()));
    closers.push(() => new Promise<void>((resolve) => smtp.close(() => resolve())));
    port = (smtp.server.address() as { port: number }).port;
  }
  const rootSpki = new X509Certificate(root.certPem).publicKey.export({ type: "spki", format: "der" }) as Buffer;
  const records = [{ type: "TLSA", name: `_${port}._tcp.${host}`, ttl: 60, data: { usage: 2, selector: 1, matchingType: 0, certificate: rootSpki } }] as unknown as dnsPacket.Answer[];
  const fixture = await startFixtureDns((query, transport) => {
    const q = query.questions![0]!;
    if (q.type !== "TLSA") return { message: answerTo(query, []) };
    return { message: transport === "udp" ? answerTo(query, [], { flags: dnsPacket.TRUNCATED_RESPONSE }) : answerTo(query, records) };
  });
  closers.push(() => fixture.close());
  const w = await dnsWorld(fixture.port, { resolve: [{ pattern: host, address: ADDRESSES[0]!, addresses: ADDRESSES }], config: { revocation: false } });
  closers.push(() => w.close());

  const created = await w.h.request("POST", "/v1/certificates", { body: { domain: host, port, protocol: "smtp" } });
  expect(created.status).toBe(201);
  const got = await w.h.request("GET", `/v1/certificates/${(created.body as any).data.id}`);
  const endpoints = (got.body as any).data.endpoints as any[];
  expect(endpoints.length).toBe(16);
  expect(endpoints.map((e) => e.dane?.status)).toEqual(ADDRESSES.map(() => "match"));
});
