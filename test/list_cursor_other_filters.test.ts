/**
 * A cursor is the continuation of one query (CONTRACT §4: a bad `cursor` is `invalid_request`): taken
 * under one filter and used under another (a `status=expiring` walk resumed as a full export, a tag
 * walk resumed with another tag), it is refused with 400 rather than answering a page that silently
 * starts in the middle of the other list. The same filters in another order go on.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

const BASE = Math.floor(Date.now() / 1000) * 1000;
const servers: TlsTestServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

async function serve(domain: string, daysLeft: number) {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notAfter: new Date(BASE + daysLeft * DAY + 3_600_000) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  servers.push(server);
  return server;
}

/** What came back, in short: the status, the error code, or the names listed. */
const outcome = (response: { status: number; body: any }) => ({
  status: response.status,
  code: response.body.error?.code ?? null,
  names: response.body.data ? response.body.data.map((c: any) => c.name) : null,
});

for (const kind of ["memory", "libsql"] as const) {
  describe(`${kind} store`, () => {
    let h: Harness;
    beforeAll(async () => {
      h = await createHarness({ store: kind });
      // By expiry: v1 (valid, 40 d), e1 and e2 (expiring: 50 and 55 d under a 60-day threshold), v2 (valid, 70 d).
      const fleet = [
        { name: "v1", days: 40, thresholds: [7], tags: ["team:a"] },
        { name: "e1", days: 50, thresholds: [60], tags: ["team:b"] },
        { name: "e2", days: 55, thresholds: [60], tags: ["team:b"] },
        { name: "v2", days: 70, thresholds: [7], tags: ["team:a"] },
      ];
      for (const c of fleet) {
        const domain = `${c.name}.${TEST_DOMAIN}`;
        const server = await serve(domain, c.days);
        expectData(
          await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, alertThresholds: c.thresholds, tags: c.tags } }),
          201,
        );
      }
    });
    afterAll(() => h.close());

    test("a status=expiring cursor used for the unfiltered list is refused, not a list missing v1", async () => {
      const first = await h.request("GET", "/v1/certificates?status=expiring&limit=1");
      expect(expectData(first, 200).map((c: any) => c.name)).toEqual([`e1.${TEST_DOMAIN}`]);
      const resumed = await h.request("GET", `/v1/certificates?cursor=${first.body.meta.nextCursor}`);
      // Today: 200 with [e2, v2]: v1, which the unfiltered list holds first, is skipped without a word.
      expect(outcome(resumed)).toEqual({ status: 400, code: "invalid_request", names: null });
      expectError(resumed, 400, "invalid_request");
    });

    test("a tag=team:b cursor used with tag=team:a is refused, not a list missing v1", async () => {
      const first = await h.request("GET", "/v1/certificates?tag=team:b&limit=1");
      expect(expectData(first, 200).map((c: any) => c.name)).toEqual([`e1.${TEST_DOMAIN}`]);
      const resumed = await h.request("GET", `/v1/certificates?tag=team:a&cursor=${first.body.meta.nextCursor}`);
      // Today: 200 with [v2] alone: v1, the first of tag=team:a, is skipped without a word.
      expect(outcome(resumed)).toEqual({ status: 400, code: "invalid_request", names: null });
      expectError(resumed, 400, "invalid_request");
    });
  });
}
