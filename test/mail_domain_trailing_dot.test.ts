/**
 * mailDomain (CONTRACT §22) and connectTo are host names by §5's rules: one trailing dot removed, then
 * at most 253 characters. A 253-character name written with its trailing dot (254 characters as given)
 * is accepted on add and patch, as the same name is for `domain`, and stored without the dot.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort } from "./support/servers.ts";
import { startStarttlsServer, type StarttlsServer } from "./support/starttls_servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let smtp: StarttlsServer;
const host = `mx.maildot.${TEST_DOMAIN}`;
// 63 + 1 + 63 + 1 + 63 + 1 + 45 + 1 + 15 = 253 characters: the longest name §5 allows (under the
// test domain, which resolves to 127.0.0.1, so nothing leaves loopback).
const longest = `${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(45)}.${TEST_DOMAIN}`;

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [host] });
  smtp = await startStarttlsServer("smtp", { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await smtp.close();
});

test("a 253-character mailDomain or connectTo with one trailing dot is accepted on add and patch, stored without the dot", async () => {
  expect(longest.length).toBe(253);
  // The same spelling is a valid domain: §5 removes the dot before counting.
  const asDomain = await h.request("POST", "/v1/certificates", { body: { domain: `${longest}.`, port: await refusedPort() } });
  expect(asDomain.status).toBe(422);

  const added = await h.request("POST", "/v1/certificates", { body: { domain: host, port: smtp.port, protocol: "smtp", mailDomain: `${longest}.` } });
  const created = expectData(added, 201);
  expect(expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200).mailDomain).toBe(longest);

  expectData(await h.request("PATCH", `/v1/certificates/${created.id}`, { body: { mailDomain: "example.com" } }), 200);
  const patched = expectData(await h.request("PATCH", `/v1/certificates/${created.id}`, { body: { mailDomain: `${longest.toUpperCase()}.` } }), 200);
  expect(patched.mailDomain).toBe(longest);
  // connectTo, a host name by the same rule.
  const connected = expectData(await h.request("PATCH", `/v1/certificates/${created.id}`, { body: { connectTo: `${longest}.` } }), 200);
  expect(connected.connectTo).toBe(longest);
});
