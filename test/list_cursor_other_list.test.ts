/**
 * A cursor of one list passed to another is refused (CONTRACT §4: a bad `cursor` is `invalid_request`):
 * the certificates', channels' and watches' cursors hold positions of one shape (a time and an id), and
 * each list took the others', answering a page that continues nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 200 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
});
afterAll(() => server.close());

for (const kind of ["memory", "libsql"] as const) {
  describe(`${kind} store`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ store: kind });
      for (let i = 0; i < 3; i++) {
        expectData(await h.request("POST", "/v1/certificates", { body: { domain: `c${i}.${TEST_DOMAIN}`, port: server.port } }), 201);
        expectData(
          await h.request("POST", "/v1/channels", { body: { type: "webhook", name: `ch${i}`, config: { url: "https://hooks.example.com/x" } } }),
          201,
        );
        expectData(await h.request("POST", "/v1/watches", { body: { domain: `w${i}.example.com` } }), 201);
      }
    });
    afterAll(() => h.close());

    /** What came back, in short: the status, the error code, or how many items were listed. */
    const outcome = (response: { status: number; body: any }) => ({
      status: response.status,
      code: response.body.error?.code ?? null,
      items: Array.isArray(response.body.data) ? response.body.data.length : null,
    });
    const refused = { status: 400, code: "invalid_request", items: null };

    const cursorOf = async (path: string) => {
      const response = await h.request("GET", `${path}?limit=1`);
      expectData(response, 200);
      expect(typeof response.body.meta.nextCursor).toBe("string");
      return response.body.meta.nextCursor as string;
    };

    test("a channels cursor given to GET /v1/certificates is invalid_request, not a page", async () => {
      const cursor = await cursorOf("/v1/channels");
      const response = await h.request("GET", `/v1/certificates?limit=1&cursor=${cursor}`);
      expect(outcome(response)).toEqual(refused);
      expectError(response, 400, "invalid_request");
    });

    test("a certificates cursor given to GET /v1/channels is invalid_request, not a page", async () => {
      const cursor = await cursorOf("/v1/certificates");
      const response = await h.request("GET", `/v1/channels?limit=1&cursor=${cursor}`);
      expect(outcome(response)).toEqual(refused);
      expectError(response, 400, "invalid_request");
    });

    test("a channels cursor given to GET /v1/watches is invalid_request, not a page", async () => {
      const cursor = await cursorOf("/v1/channels");
      const response = await h.request("GET", `/v1/watches?limit=1&cursor=${cursor}`);
      expect(outcome(response)).toEqual(refused);
      expectError(response, 400, "invalid_request");
    });

    test("an events-shaped cursor is already refused by the certificate list", async () => {
      const made = Buffer.from(JSON.stringify(["evt_aaaaaaaaaaaaaaaaaaaa"])).toString("base64url");
      expectError(await h.request("GET", `/v1/certificates?cursor=${made}`), 400, "invalid_request");
    });
  });
}
