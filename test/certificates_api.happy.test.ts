/** The certificates API doing what it is for: add, get, list, patch, check, delete. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";

let h: Harness;
const servers: TlsTestServer[] = [];

beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
  await Promise.all(servers.map((s) => s.close()));
});

/** One base time for every certificate here: equal days left means an equal notAfter, to the second. */
const BASE = Math.floor(Date.now() / 1000) * 1000;

/** A TLS server for `names` (the first is the leaf's CN) expiring in `daysLeft` days. */
async function serve(names: string[], daysLeft = 90): Promise<TlsTestServer> {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: names, notAfter: new Date(BASE + daysLeft * DAY + 3_600_000) });
  const server = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  servers.push(server);
  return server;
}

describe("POST /v1/certificates", () => {
  test("a body holding only the domain is enough: 201 with exactly the 13 fields of the add response", async () => {
    const domain = `only.${TEST_DOMAIN}`;
    const server = await serve([domain]);
    const data = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(Object.keys(data)).toEqual([
      "id", "domain", "name", "status", "daysUntilExpiry", "expiresAt", "issuedAt",
      "issuer", "subject", "port", "alertThresholds", "createdAt", "updatedAt",
    ]);
    expect(data).toMatchObject({ domain, name: domain, status: "valid", daysUntilExpiry: 90, port: server.port, alertThresholds: [30, 14, 7, 3, 1] });
  });

  test("normalizes the domain: lower case, no trailing dot", async () => {
    const server = await serve([`mixed.${TEST_DOMAIN}`]);
    const data = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `MiXeD.Certkeeper.TEST.`, port: server.port } }), 201);
    expect(data.domain).toBe(`mixed.${TEST_DOMAIN}`);
  });

  test("stores an internationalized domain in punycode and checks it by that name", async () => {
    const ascii = `xn--bcher-kva.${TEST_DOMAIN}`;
    const server = await serve([ascii]);
    const data = expectData(await h.request("POST", "/v1/certificates", { body: { domain: `bücher.${TEST_DOMAIN}`, port: server.port } }), 201);
    expect([data.domain, data.status]).toEqual([ascii, "valid"]);
  });

  test("keeps a given name and sorts the thresholds descending", async () => {
    const domain = `named.${TEST_DOMAIN}`;
    const server = await serve([domain]);
    const data = expectData(
      await h.request("POST", "/v1/certificates", { body: { domain, port: server.port, name: "Shop", alertThresholds: [1, 60, 7] } }),
      201,
    );
    expect([data.name, data.alertThresholds]).toEqual(["Shop", [60, 7, 1]]);
  });

  test("with no thresholds a certificate is expiring within 30 days, and valid beyond", async () => {
    const near = await serve([`near.${TEST_DOMAIN}`], 30);
    const far = await serve([`far.${TEST_DOMAIN}`], 31);
    const body = (domain: string, port: number) => ({ body: { domain, port, alertThresholds: [] } });
    expect(expectData(await h.request("POST", "/v1/certificates", body(`near.${TEST_DOMAIN}`, near.port)), 201).status).toBe("expiring");
    expect(expectData(await h.request("POST", "/v1/certificates", body(`far.${TEST_DOMAIN}`, far.port)), 201).status).toBe("valid");
  });

  test("the same domain on another port is another certificate", async () => {
    const domain = `twoports.${TEST_DOMAIN}`;
    const [a, b] = [await serve([domain]), await serve([domain])];
    expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
    expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: b.port } }), 201);
  });

  test("ten concurrent adds of one domain and port: exactly one 201, nine 409", async () => {
    for (const kind of ["memory", "libsql"] as const) {
      const own = await createHarness({ store: kind });
      const domain = `race.${TEST_DOMAIN}`;
      const server = await serve([domain]);
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => own.request("POST", "/v1/certificates", { body: { domain, port: server.port } })),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect({ kind, statuses }).toEqual({ kind, statuses: [201, ...Array(9).fill(409)] });
      await own.close();
    }
  });

  test("the default port is 443", async () => {
    const own = await createHarness({ config: { resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: null }] } });
    const response = await own.request("POST", "/v1/certificates", { body: { domain: `default.${TEST_DOMAIN}` } });
    expect(response.body.error.message).toContain(`"default.${TEST_DOMAIN}:443"`);
    await own.close();
  });
});

describe("GET, PATCH, POST check, DELETE /v1/certificates/{id}", () => {
  let id: string;
  let server: TlsTestServer;
  const domain = `lifecycle.${TEST_DOMAIN}`;

  beforeAll(async () => {
    server = await serve([domain]);
    id = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201).id;
  });

  test("PATCH changes the name and the thresholds (sorted), and moves updatedAt", async () => {
    const before = expectData(await h.request("GET", `/v1/certificates/${id}`), 200);
    await Bun.sleep(5);
    const after = expectData(await h.request("PATCH", `/v1/certificates/${id}`, { body: { name: "Renamed", alertThresholds: [3, 21] } }), 200);
    expect([after.name, after.alertThresholds, after.domain]).toEqual(["Renamed", [21, 3], domain]);
    expect(after.updatedAt > before.updatedAt).toBe(true);
    expect(after.createdAt).toBe(before.createdAt);
    expect(expectData(await h.request("GET", `/v1/certificates/${id}`), 200)).toEqual(after);
  });

  test("POST check re-retrieves now and answers the updated certificate (a renewal shows at once)", async () => {
    const { rsaIntermediate } = await testPki();
    const renewed = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], serial: "7e57", notAfter: new Date(Date.now() + 200 * DAY + 3_600_000) });
    server.setCertificate(chainPem(renewed, rsaIntermediate), renewed.keyPem);
    const checked = expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
    expect([checked.serialNumber, checked.daysUntilExpiry, checked.status]).toEqual(["7E:57", 200, "valid"]);
    expect(Object.keys(checked)).toContain("statusReason");
  });

  test("a failed manual check marks it unreachable and keeps the last details", async () => {
    const port = server.port;
    await server.close();
    const checked = expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
    expect([checked.status, checked.statusReason, checked.serialNumber]).toEqual(["unreachable", "connection_refused", "7E:57"]);
    server = await startTlsServer({ ...(await leafFor(domain)), port });
    servers.push(server);
    const recovered = expectData(await h.request("POST", `/v1/certificates/${id}/check`), 200);
    expect([recovered.status, recovered.statusReason]).toEqual(["valid", null]);
  });

  test("DELETE answers { id, deleted: true }; the certificate is gone after", async () => {
    expect(expectData(await h.request("DELETE", `/v1/certificates/${id}`), 200)).toEqual({ id, deleted: true });
    expect((await h.request("GET", `/v1/certificates/${id}`)).status).toBe(404);
    expect((await h.request("DELETE", `/v1/certificates/${id}`)).status).toBe(404);
  });
});

async function leafFor(domain: string) {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  return { cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem };
}

describe("GET /v1/certificates", () => {
  let l: Harness;
  const added: Array<{ id: string; domain: string; daysLeft: number }> = [];

  beforeAll(async () => {
    l = await createHarness();
    for (const [label, daysLeft] of [["c", 50], ["a", 10], ["e", 400], ["b", -3], ["d", 50]] as const) {
      const domain = `${label}.list.${TEST_DOMAIN}`;
      const server = await serve([domain], daysLeft);
      const id = expectData(await l.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201).id;
      added.push({ id, domain, daysLeft });
    }
  });
  afterAll(() => l.close());

  const expected = () =>
    [...added].sort((x, y) => x.daysLeft - y.daysLeft || (x.id < y.id ? -1 : 1)).map((x) => x.domain);

  test("orders by expiresAt, then id, with every field of get plus statusReason", async () => {
    const response = await l.request("GET", "/v1/certificates");
    const data = expectData(response, 200);
    expect(data.map((c: any) => c.domain)).toEqual(expected());
    expect(response.body.meta.nextCursor).toBeNull();
    expect(data[0]).toEqual(expectData(await l.request("GET", `/v1/certificates/${data[0].id}`), 200));
  });

  test("pages with limit and cursor, and the last page's nextCursor is null", async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const response = await l.request("GET", `/v1/certificates?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...expectData(response, 200).map((c: any) => c.domain));
      cursor = response.body.meta.nextCursor;
      pages++;
    } while (cursor);
    expect([seen, pages]).toEqual([expected(), 3]);
  });

  test("filters by one status or a comma list, and by a case-insensitive domain substring", async () => {
    const statuses = async (query: string) => expectData(await l.request("GET", `/v1/certificates?${query}`), 200).map((c: any) => c.status);
    expect(await statuses("status=expired")).toEqual(["expired"]);
    expect(await statuses("status=expiring,expired")).toEqual(["expired", "expiring"]);
    expect(await statuses("status=unreachable")).toEqual([]);
    const domains = expectData(await l.request("GET", "/v1/certificates?domain=E.LIST"), 200).map((c: any) => c.domain);
    expect(domains).toEqual([`e.list.${TEST_DOMAIN}`]);
  });

  test("a list's parameter given twice adds up; a single value's given twice is refused, not one of them taken", async () => {
    const statuses = async (query: string) => expectData(await l.request("GET", `/v1/certificates?${query}`), 200).map((c: any) => c.status);
    expect(await statuses("status=expiring&status=expired")).toEqual(["expired", "expiring"]);
    for (const query of ["domain=e.list&domain=zzz", "limit=1&limit=2"]) {
      const refused = await l.request("GET", `/v1/certificates?${query}`);
      expect([refused.status, refused.body.error.code]).toEqual([400, "invalid_request"]);
      expect(refused.body.error.message).toBe(`Query parameter "${query.split("=")[0]}" is given 2 times: give it once.`);
    }
  });

  test("a cursor neither skips nor repeats an item while others are added or removed", async () => {
    const first = await l.request("GET", "/v1/certificates?limit=2");
    const firstPage = expectData(first, 200).map((c: any) => c.domain);
    // Remove an item already seen, and add one that sorts after the cursor.
    await l.request("DELETE", `/v1/certificates/${added.find((a) => a.domain === firstPage[0])!.id}`);
    const lateDomain = `f.list.${TEST_DOMAIN}`;
    const server = await serve([lateDomain], 700);
    expectData(await l.request("POST", "/v1/certificates", { body: { domain: lateDomain, port: server.port } }), 201);
    const rest: string[] = [];
    let cursor: string | null = first.body.meta.nextCursor;
    while (cursor) {
      const response = await l.request("GET", `/v1/certificates?limit=2&cursor=${cursor}`);
      rest.push(...expectData(response, 200).map((c: any) => c.domain));
      cursor = response.body.meta.nextCursor;
    }
    expect([...firstPage, ...rest]).toEqual([...expected(), lateDomain]);
  });

});
