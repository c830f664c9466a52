/**
 * `connectTo` is taken as written, as a domain is: a value holding full-width letters, a soft hyphen,
 * an ideographic full stop, a long s or a second trailing dot is refused with `invalid_request`
 * (CONTRACT §11), not stored as another, ASCII name that would then be connected to.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
let server: TlsTestServer;

beforeAll(async () => {
  h = await createHarness();
  const { rsaIntermediate } = await testPki();
  const names = ["a", "b", "c", "d", "e", "f"].map((l) => `${l}.xn--bcher-kva.${TEST_DOMAIN}`);
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: names, notAfter: new Date(Date.now() + 90 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(async () => {
  await h.close();
  await server.close();
});

const CASES: Array<[string, string, string]> = [
  ["a", `\uFF57\uFF57\uFF57.${TEST_DOMAIN}`, "full-width letters"],
  ["b", `ww\u00ADw.${TEST_DOMAIN}`, "a soft hyphen (invisible)"],
  ["c", `www\u3002${TEST_DOMAIN}`, "an ideographic full stop (another dot)"],
  ["d", `\u017Fhop.${TEST_DOMAIN}`, "U+017F LONG S, which IDNA maps to s"],
  ["e", `b\u00FCcher.${TEST_DOMAIN}..`, "two trailing dots"],
];

describe("connectTo spellings that name processing turns into another name", () => {
  test.each(CASES)("%s: %p (%s) is refused with invalid_request, as the domain rules refuse it", async (label, connectTo) => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `${label}.xn--bcher-kva.${TEST_DOMAIN}`, port: server.port, connectTo } });
    expect({
      status: response.status,
      code: (response.body as any)?.error?.code,
      storedConnectTo: (response.body as any)?.data ? ((await h.request("GET", `/v1/certificates/${(response.body as any).data.id}`)).body as any).data.connectTo : undefined,
    }).toEqual({ status: 400, code: "invalid_request", storedConnectTo: undefined });
  });
});
