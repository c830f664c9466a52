/**
 * Renewal settings refused as CONTRACT §4 says (CONTRACT §18): a bad alert policy anywhere is 400
 * invalid_request naming the field, nothing stored; a bad CERTKEEPER_ALERT_POLICY stops the server at
 * start naming the variable; another organization's certificate is answered as a missing one.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHarness, expectData, expectError, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { runCli, tempWorkspace as workspace } from "./support/cli.ts";

setDefaultTimeout(30_000);

let h: Harness;
let server: TlsTestServer;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`policy-errors.${TEST_DOMAIN}`] });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await server.close();
});

describe("a bad alert policy", () => {
  test.each([["weekly"], ["RENEWAL"], [""], [7], [null], [["renewal"]]])("%p on add: 400 invalid_request naming alertPolicy, nothing stored", async (value) => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `policy-errors.${TEST_DOMAIN}`, port: server.port, alertPolicy: value } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain("alertPolicy");
    expect(expectData(await h.request("GET", "/v1/certificates"), 200)).toEqual([]);
  });

  test("on PATCH: 400 invalid_request, the certificate unchanged", async () => {
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `policy-errors.${TEST_DOMAIN}`, port: server.port } }), 201);
    const before = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
    const response = await h.request("PATCH", `/v1/certificates/${added.id}`, { body: { alertPolicy: "monthly" } });
    expectError(response, 400, "invalid_request");
    expect(response.body.error.message).toContain("alertPolicy");
    expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200)).toEqual(before);
    expectData(await h.request("DELETE", `/v1/certificates/${added.id}`), 200);
  });

  test("an unknown renewal state in ?renewal= is invalid_request", async () => {
    for (const query of ["renewal=late", "renewal=overdue,soon", "renewal="]) {
      expectError(await h.request("GET", `/v1/certificates?${query}`), 400, "invalid_request");
    }
  });
});

describe("who may change it", () => {
  test("a member key may not patch the alert policy (403); another organization's certificate is 404, unchanged", async () => {
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `policy-errors.${TEST_DOMAIN}`, port: server.port, alertPolicy: "days" } }), 201);
    expectError(await h.request("PATCH", `/v1/certificates/${added.id}`, { key: h.keys.member.key, body: { alertPolicy: "renewal" } }), 403, "permission_denied");
    const other = await h.core.services.admin.createOrganization({ name: "Other", plan: "pro" });
    const stranger = await h.makeKey("owner", "live", other.id);
    expectError(await h.request("PATCH", `/v1/certificates/${added.id}`, { key: stranger.key, body: { alertPolicy: "renewal" } }), 404, "certificate_not_found");
    expectError(await h.request("PATCH", `/v1/certificates/${added.id}`, { key: h.keys.test.key, body: { alertPolicy: "renewal" } }), 404, "certificate_not_found");
    expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).alertPolicy).toBe("days");
    // And another organization's overdue certificates never show in this one's filter.
    expect(expectData(await h.request("GET", "/v1/certificates?renewal=overdue,not_due,requested", { key: stranger.key }), 200)).toEqual([]);
  });
});

describe("the server's default", () => {
  test("a CERTKEEPER_ALERT_POLICY that is neither renewal nor days stops the server at start, naming the variable", async () => {
    const ws = workspace();
    try {
      const result = await runCli(["serve"], { env: { ...ws.env, CERTKEEPER_ALERT_POLICY: "weekly", CERTKEEPER_PORT: "0" }, cwd: ws.dir });
      expect(result.code).not.toBe(0);
      expect(result.stderr).toContain("CERTKEEPER_ALERT_POLICY");
      expect(result.stderr).toContain("renewal or days");
    } finally {
      ws.cleanup();
    }
  });
});
