/**
 * Imports (CONTRACT §16) in process: 202 at once, progress, and every item judged exactly as
 * POST /v1/certificates would judge it (validation, duplicates, plan limits in item order, retrieval),
 * against real TLS servers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { DAY } from "../core/base/time.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let server: TlsTestServer;
let refused: number;
beforeAll(async () => {
  const { rsaIntermediate } = await testPki();
  // One server answers for every name under imports.certkeeper.test (its certificate has the wildcard).
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`*.imports.${TEST_DOMAIN}`], notAfter: new Date(Date.now() + 60 * DAY) });
  server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  refused = await refusedPort();
});
afterAll(async () => {
  await server.close();
});

let h: Harness;
afterEach(async () => {
  await h?.close();
});

const name = (n: number | string) => `site-${n}.imports.${TEST_DOMAIN}`;

/** Runs the import worker until nothing is due, then answers GET /v1/imports/{id}. */
async function finish(harness: Harness, id: string) {
  await harness.core.services.imports!.loop.runDue();
  return expectData(await harness.request("GET", `/v1/imports/${id}`), 200);
}

describe("POST /v1/imports", () => {
  test("answers 202 with the running import; GET shows it finished with each item's outcome, every certificate as POST makes it", async () => {
    h = await createHarness({ store: "libsql" });
    const response = await h.request("POST", "/v1/imports", {
      body: { certificates: [{ domain: name(1), port: server.port, tags: ["team:b", "team:a"] }, { domain: name(2), port: server.port, name: "Two" }] },
    });
    const created = expectData(response, 202);
    expect(created).toEqual({
      id: expect.stringMatching(/^imp_[0-9A-Za-z]{16,}$/),
      status: "running",
      total: 2,
      processed: 0,
      created: 0,
      failed: 0,
      createdAt: expect.any(String),
      finishedAt: null,
    });
    const running = expectData(await h.request("GET", `/v1/imports/${created.id}`), 200);
    expect(running).toEqual(created);

    const done = await finish(h, created.id);
    expect(done).toMatchObject({ status: "finished", total: 2, processed: 2, created: 2, failed: 0, finishedAt: expect.any(String) });
    expect(done.results).toEqual([
      { index: 0, status: "created", certificateId: expect.stringMatching(/^cert_/), error: null },
      { index: 1, status: "created", certificateId: expect.stringMatching(/^cert_/), error: null },
    ]);
    const first = expectData(await h.request("GET", `/v1/certificates/${done.results[0].certificateId}`), 200);
    expect(first).toMatchObject({ domain: name(1), port: server.port, tags: ["team:a", "team:b"], status: "valid", issuer: "certkeeper intermediates" });
    const second = expectData(await h.request("GET", `/v1/certificates/${done.results[1].certificateId}`), 200);
    expect(second.name).toBe("Two");
  });

  test("each item fails alone with the code POST would give: bad fields, unknown fields, __proto__, duplicates, no certificate", async () => {
    h = await createHarness({ store: "libsql" });
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("existing"), port: server.port } }), 201);
    const items = [
      { domain: name("ok"), port: server.port },
      { domain: "https://a.com/", port: server.port },
      { domain: name("x"), prot: 1 },
      JSON.parse(`{"domain": "${name("proto")}", "__proto__": {"admin": true}}`),
      { domain: name("existing"), port: server.port },
      { domain: name("ok"), port: server.port },
      { domain: name("closed"), port: refused },
      { domain: name("tags"), port: server.port, tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
      { domain: name("space"), port: server.port, tags: ["a b"] },
      { domain: name("thresholds"), port: server.port, alertThresholds: [1, 1] },
    ];
    const { id } = expectData(await h.request("POST", "/v1/imports", { rawBody: JSON.stringify({ certificates: items }), headers: { "content-type": "application/json" } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => [r.index, r.status, r.error?.code ?? null])).toEqual([
      [0, "created", null],
      [1, "failed", "invalid_domain"],
      [2, "failed", "invalid_request"],
      [3, "failed", "invalid_request"],
      [4, "failed", "duplicate_domain"],
      [5, "failed", "duplicate_domain"],
      [6, "failed", "certificate_not_found"],
      [7, "failed", "invalid_request"],
      [8, "failed", "invalid_request"],
      [9, "failed", "invalid_request"],
    ]);
    expect(done).toMatchObject({ processed: 10, created: 1, failed: 9 });
    // The messages are POST's own.
    const post = await h.request("POST", "/v1/certificates", { body: items[1] });
    expect(done.results[1].error).toEqual(post.body.error);
    expect(done.results[3].error.message).toContain("__proto__");
    expect(expectData(await h.request("GET", "/v1/certificates?limit=100"), 200).length).toBe(2);
  });

  test("a name monitored already is a duplicate only for the same target: the same name through a given address is another certificate, as POST makes it", async () => {
    h = await createHarness({ store: "libsql" });
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("pinned"), port: server.port } }), 201);
    const items = [
      { domain: name("pinned"), port: server.port, connectTo: "127.0.0.1" },
      { domain: name("pinned"), port: server.port },
      { domain: name("pinned"), port: server.port, connectTo: "127.0.0.1" },
    ];
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => r.error?.code ?? r.status)).toEqual(["created", "duplicate_domain", "duplicate_domain"]);
    const listed = expectData(await h.request("GET", "/v1/certificates?limit=100"), 200);
    expect(listed.map((c: any) => c.connectTo ?? null).sort()).toEqual(["127.0.0.1", null]);
  });

  test("plan limits fall in item order: with 3 places left, items 0, 2, 3 are created and the rest refused, an unreachable one included", async () => {
    h = await createHarness({ store: "libsql", limits: { certificates: 4 } });
    expectData(await h.request("POST", "/v1/certificates", { body: { domain: name("first"), port: server.port } }), 201);
    const items = [
      { domain: name(0), port: server.port },
      { domain: name(1), port: refused },
      { domain: name(2), port: server.port },
      { domain: name(3), port: server.port },
      { domain: name(4), port: server.port },
      { domain: name(5), port: refused },
      { domain: "not a domain" },
    ];
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.results.map((r: any) => [r.index, r.error?.code ?? "created"])).toEqual([
      [0, "created"],
      [1, "certificate_not_found"],
      [2, "created"],
      [3, "created"],
      [4, "certificate_limit_reached"],
      [5, "certificate_limit_reached"],
      [6, "invalid_domain"],
    ]);
  });

  test.each(["libsql", "memory"] as const)("%s: the plan limit judged is the organization's when the items are, not when the import was posted", async (store) => {
    h = await createHarness({ store, limits: { certificates: 100 } });
    const items = [0, 1, 2, 3].map((n) => ({ domain: name(`${store}-lowered-${n}`), port: server.port }));
    const lowered = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    await h.core.services.admin.updateOrganization(h.org.id, { limits: { certificates: 2 } });
    const done = await finish(h, lowered.id);
    expect(done.results.map((r: any) => r.error?.code ?? "created")).toEqual(["created", "created", "certificate_limit_reached", "certificate_limit_reached"]);
    expect(done.results[2].error.message).toContain("2");

    await h.core.services.admin.updateOrganization(h.org.id, { limits: { certificates: 2 } });
    const more = [0, 1].map((n) => ({ domain: name(`${store}-raised-${n}`), port: server.port }));
    const raised = expectData(await h.request("POST", "/v1/imports", { body: { certificates: more } }), 202);
    await h.core.services.admin.updateOrganization(h.org.id, { limits: { certificates: 10 } });
    expect((await finish(h, raised.id)).results.map((r: any) => r.error?.code ?? "created")).toEqual(["created", "created"]);
  });

  test("at most CERTKEEPER_CHECK_CONCURRENCY retrievals are in flight at once", async () => {
    h = await createHarness({ store: "memory", config: { checkConcurrency: 3 } });
    let inFlight = 0;
    let most = 0;
    const source = h.core.services.monitor as unknown as { inspect: (d: string, p: number) => Promise<unknown> };
    const inspect = source.inspect.bind(source);
    source.inspect = async (domain, port) => {
      most = Math.max(most, ++inFlight);
      try {
        await Bun.sleep(5);
        return await inspect(domain, port);
      } finally {
        inFlight--;
      }
    };
    const items = Array.from({ length: 30 }, (_, i) => ({ domain: name(`c${i}`), port: server.port }));
    const { id } = expectData(await h.request("POST", "/v1/imports", { body: { certificates: items } }), 202);
    const done = await finish(h, id);
    expect(done.created).toBe(30);
    expect(most).toBe(3);
  });
});
