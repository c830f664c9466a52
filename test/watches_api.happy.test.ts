/** The watches API (CONTRACT §15): create, list, get, patch, delete; what polls show on a watch. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createTransports } from "../adapters/notify/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness, loopbackTransports } from "./support/harness.ts";
import { createLeaf } from "./support/pki.ts";
import { startCtServer, type CtServer } from "./support/ct_server.ts";

let h: Harness;
let ct: CtServer;
let transports: ReturnType<typeof createTransports>;
const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

beforeAll(async () => {
  ct = await startCtServer();
  transports = await loopbackTransports();
  h = await createHarness({ transports, config: { ctUrl: ct.url, ctIntervalMs: 3_600_000 } });
});
afterAll(async () => {
  await h.close();
  await ct.close();
  await transports.close();
});

describe("POST /v1/watches", () => {
  test("201 with the watch and its defaults; the domain normalized as certificates' are", async () => {
    const data = expectData(await h.request("POST", "/v1/watches", { body: { domain: "Example.COM." } }), 201);
    expect(data).toEqual({
      id: expect.stringMatching(/^wch_[0-9A-Za-z]{16,}$/),
      domain: "example.com",
      includeSubdomains: true,
      autoMonitor: false,
      allowedIssuers: [],
      lastPolledAt: null,
      lastError: null,
      issuancesSeen: 0,
      createdAt: expect.stringMatching(iso),
      updatedAt: data.createdAt,
    });
  });

  test("every field given", async () => {
    const body = { domain: "xn--bcher-kva.example", includeSubdomains: false, autoMonitor: true, allowedIssuers: ["Let's Encrypt", "DigiCert Inc"] };
    const data = expectData(await h.request("POST", "/v1/watches", { body }), 201);
    expect(data).toMatchObject(body);
  });
});

describe("GET, PATCH, DELETE /v1/watches", () => {
  test("list is newest first and cursor-paginated; get returns one", async () => {
    const ids: string[] = [];
    for (const name of ["a", "b", "c"]) ids.push(expectData(await h.request("POST", "/v1/watches", { body: { domain: `${name}.list.test` } }), 201).id);
    const all = expectData(await h.request("GET", "/v1/watches?limit=100"), 200) as Array<{ id: string; createdAt: string }>;
    const newestFirst = [...all].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || (a.id < b.id ? 1 : -1));
    expect(all.map((w) => w.id)).toEqual(newestFirst.map((w) => w.id));
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await h.request("GET", `/v1/watches?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.status).toBe(200);
      paged.push(...page.body.data.map((w: { id: string }) => w.id));
      cursor = page.body.meta.nextCursor;
    } while (cursor);
    expect(paged).toEqual(all.map((w) => w.id));
    for (const id of ids) expect(paged).toContain(id);
    const one = expectData(await h.request("GET", `/v1/watches/${ids[1]}`), 200);
    expect(one.domain).toBe("b.list.test");
  });

  test("PATCH changes only what it names; DELETE answers { id, deleted: true } and the watch is gone", async () => {
    const created = expectData(await h.request("POST", "/v1/watches", { body: { domain: "patch.test" } }), 201);
    const patched = expectData(await h.request("PATCH", `/v1/watches/${created.id}`, { body: { autoMonitor: true, allowedIssuers: ["Sectigo Limited"] } }), 200);
    expect(patched).toEqual({ ...created, autoMonitor: true, allowedIssuers: ["Sectigo Limited"], updatedAt: expect.stringMatching(iso) });
    expect(expectData(await h.request("DELETE", `/v1/watches/${created.id}`), 200)).toEqual({ id: created.id, deleted: true });
    expect((await h.request("GET", `/v1/watches/${created.id}`)).status).toBe(404);
  });
});

describe("polling, seen through the API", () => {
  test("the first poll fills issuancesSeen and lastPolledAt without events; the next issuance is an event; autoMonitor's failed add is lastError", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `ctwatch.${TEST_DOMAIN}`;
    const existing = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain] });
    ct.log(existing, rsaIntermediate);
    const watch = expectData(await h.request("POST", "/v1/watches", { body: { domain, autoMonitor: true, allowedIssuers: ["certkeeper intermediates"] } }), 201);
    {
      const poller = h.core.services.watches as unknown as { runDue(): Promise<number> };
      expect(poller).toBeDefined();
      await poller.runDue();
      let shown = expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200);
      expect(shown.issuancesSeen).toBe(1);
      expect(shown.lastPolledAt).toMatch(iso);
      // Port 443 on 127.0.0.1 has no test server: the add fails and is reported, to be retried.
      expect(shown.lastError).toMatch(new RegExp(`^Could not monitor "${domain.replace(/\./g, "\\.")}": No TLS certificate could be retrieved`));
      const events = expectData(await h.request("GET", "/v1/events"), 200);
      expect(events.filter((e: { type: string }) => e.type === "certificate.issued")).toEqual([]);

      const fresh = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [`www.${domain}`] });
      ct.log(fresh, rsaIntermediate);
      await forceDue(watch.id);
      await poller.runDue();
      shown = expectData(await h.request("GET", `/v1/watches/${watch.id}`), 200);
      expect(shown.issuancesSeen).toBe(2);
      const issued = expectData(await h.request("GET", "/v1/events"), 200).filter((e: { type: string }) => e.type === "certificate.issued");
      expect(issued).toEqual([
        {
          id: expect.stringMatching(/^evt_/),
          type: "certificate.issued",
          createdAt: expect.stringMatching(iso),
          certificateId: null,
          data: {
            watchId: watch.id,
            domain,
            dnsNames: [`www.${domain}`],
            issuer: "certkeeper intermediates",
            notBefore: fresh.cert.notBefore.toISOString(),
            notAfter: fresh.cert.notAfter.toISOString(),
            fingerprintSha256: expect.stringMatching(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/),
            authorizedIssuer: true,
          },
          deliveries: [],
        },
      ]);
    }
  });
});

/** Makes a watch due now, as the passing of CERTKEEPER_CT_INTERVAL would. */
async function forceDue(id: string) {
  const store = h.core.services.store as unknown as { watches: { claimDue: Function; savePoll: Function } };
  const claimed = await store.watches.claimDue({ owner: "test-force", now: Number.MAX_SAFE_INTEGER - 2, leaseUntil: Number.MAX_SAFE_INTEGER - 1, limit: 1000 });
  for (const watch of claimed as Array<{ id: string; cursor: string | null; baselineDone: boolean; pendingNames: string[]; lastPolledAt: number | null; lastError: string | null; updatedAt: number }>) {
    await store.watches.savePoll(
      { id: watch.id, owner: "test-force", cursor: watch.cursor, newIssuances: 0, baselineDone: watch.baselineDone, pendingNames: watch.pendingNames, lastPolledAt: watch.lastPolledAt, lastError: watch.lastError, nextPollAt: watch.id === id ? 0 : Number.MAX_SAFE_INTEGER - 1, release: true, updatedAt: watch.updatedAt },
      [],
    );
  }
}
