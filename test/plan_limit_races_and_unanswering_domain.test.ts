/**
 * CONTRACT §4/§8 plan limits at their edge: the certificate limit holds when adds race, and a full
 * plan is refused 402 without contacting the domain (a domain that does not answer is still 402).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN } from "./support/harness.ts";

let tls: TestServer;
const names = [`one.limits.${TEST_DOMAIN}`, `two.limits.${TEST_DOMAIN}`, `three.limits.${TEST_DOMAIN}`];

beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: names });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await tls.close();
});

test("a limit of 2 with two adds at once from 1 stored: exactly one 201, one 402; 2 stored", async () => {
  const own = await createHarness({ limits: { certificates: 2 } });
  try {
    expectData(await own.request("POST", "/v1/certificates", { body: { domain: names[0], port: tls.port } }), 201);
    const answers = await Promise.all(names.slice(1).map((domain) => own.request("POST", "/v1/certificates", { body: { domain, port: tls.port } })));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 402]);
    expectError(answers.find((a) => a.status === 402)!, 402, "certificate_limit_reached");
    expect(expectData(await own.request("GET", "/v1/certificates"), 200)).toHaveLength(2);
  } finally {
    await own.close();
  }
});

test("at the limit, a domain that does not answer is 402 certificate_limit_reached, not 422", async () => {
  const own = await createHarness({ limits: { certificates: 1 } });
  try {
    expectData(await own.request("POST", "/v1/certificates", { body: { domain: names[0], port: tls.port } }), 201);
    const closed = await refusedPort();
    expectError(await own.request("POST", "/v1/certificates", { body: { domain: names[1], port: closed } }), 402, "certificate_limit_reached");
  } finally {
    await own.close();
  }
});
