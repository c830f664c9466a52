/**
 * Revocation in real checks (CONTRACT §14): TLS servers presenting test-PKI chains whose leaves name an
 * OCSP responder or a CRL served by a test HTTP server; what get, list, events and /metrics show.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONFIG, type Config } from "../core/config/config.ts";
import { TrustStore } from "../core/tls/trust_store.ts";
import { createTransports } from "../adapters/notify/mod.ts";
import { chainPem, createLeaf, type Issued } from "./support/pki.ts";
import { startTlsServer, refusedPort, type TlsTestServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { crl, ocspAnswer, startResponder, type Responder } from "./support/revocation.ts";
import { bunPasswords } from "../adapters/bun/passwords.ts";
import { signedInUser } from "./support/web_users.ts";
import { FakeClock } from "./support/fake_clock.ts";

let responder: Responder;
const servers: TlsTestServer[] = [];
const harnesses: Array<{ h: Harness; close: () => Promise<void> }> = [];

beforeAll(async () => {
  responder = await startResponder();
});
afterAll(async () => {
  for (const { close } of harnesses) await close();
  await Promise.all(servers.map((s) => s.close()));
  await responder.close();
});

async function harness(config: Partial<Config> = {}, clock?: FakeClock): Promise<Harness> {
  const { root } = await testPki();
  const full = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], tlsTimeoutMs: 2000, ...config };
  const transports = createTransports(full, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
  const h = await createHarness({ transports, config, passwords: bunPasswords, ...(clock ? { clock } : {}) });
  harnesses.push({ h, close: async () => { await h.close(); await transports.close(); } });
  return h;
}

async function serve(leaf: Issued, issuer: Issued): Promise<TlsTestServer> {
  const server = await startTlsServer({ cert: chainPem(leaf, issuer), key: leaf.keyPem });
  servers.push(server);
  return server;
}

/** Answers OCSP requests at `path` for these leaves with these statuses. */
function answerOcsp(path: string, issuer: Issued, statuses: Map<string, "good" | "revoked" | "held">, nextUpdateMs = 3_600_000, now = () => Date.now()) {
  const previous = responder.answer;
  responder.answer = (request) => {
    if (request.path !== path) return previous(request);
    const serialHex = Buffer.from(request.body).toString("hex");
    for (const [serial, status] of statuses) {
      if (serialHex.includes(serial.replace(/^00/, ""))) {
        const leafLike = { cert: { serialNumber: serial } } as Issued;
        return {
          body: ocspAnswer({
            leaf: leafLike,
            issuer,
            status: status === "good" ? { good: true } : { revoked: { at: new Date("2026-11-01T00:00:00Z"), reason: status === "held" ? 6 : 1 } },
            thisUpdate: new Date(now() - 60_000),
            nextUpdate: new Date(now() + nextUpdateMs),
          }),
        };
      }
    }
    return { status: 404 };
  };
}

const events = async (h: Harness, certificateId: string) =>
  expectData(await h.request("GET", "/v1/events?limit=100"), 200).filter((e: { certificateId: string }) => e.certificateId === certificateId);

describe("revocation in checks", () => {
  test("a revoked leaf: status revoked, statusReason revoked, the revocation field, one certificate.revoked, in list filters and metrics", async () => {
    const h = await harness();
    const { rsaIntermediate } = await testPki();
    const domain = `revoked.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-a`] });
    answerOcsp("/ocsp-a", rsaIntermediate, new Map([[leaf.cert.serialNumber, "revoked"]]));
    const server = await serve(leaf, rsaIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(created.status).toBe("revoked");
    expect(Object.keys(created)).not.toContain("revocation"); // the add response keeps SPEC.md's 13 fields
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(shown.status).toBe("revoked");
    expect(shown.statusReason).toBe("revoked");
    expect(shown.revocation).toEqual({
      status: "revoked",
      source: "ocsp",
      checkedAt: expect.stringMatching(/Z$/),
      revokedAt: "2026-11-01T00:00:00.000Z",
      reason: "keyCompromise",
    });
    // Re-checks do not announce it again.
    for (let i = 0; i < 3; i++) expect(expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200).status).toBe("revoked");
    const revokedEvents = (await events(h, created.id)).filter((e: { type: string }) => e.type === "certificate.revoked");
    expect(revokedEvents.length).toBe(1);
    expect(revokedEvents[0].data.certificate.revocation.status).toBe("revoked");
    const listed = expectData(await h.request("GET", "/v1/certificates?status=revoked"), 200);
    expect(listed.map((c: { id: string }) => c.id)).toEqual([created.id]);
    expect(expectData(await h.request("GET", "/v1/certificates?status=valid"), 200).map((c: { id: string }) => c.id)).not.toContain(created.id);
  });

  test("a server that first leaves out its intermediate, then sends it: the leaf is asked about then, and shown revoked", async () => {
    const h = await harness();
    const { rsaIntermediate } = await testPki();
    const domain = `fixedchain.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-fixed`] });
    answerOcsp("/ocsp-fixed", rsaIntermediate, new Map([[leaf.cert.serialNumber, "revoked"]]));
    const server = await startTlsServer({ cert: chainPem(leaf), key: leaf.keyPem });
    servers.push(server);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const first = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([first.status, first.statusReason, first.revocation.status]).toEqual(["invalid", "untrusted_issuer", "not_checked"]);
    const asked = responder.requests.filter((request) => request.path === "/ocsp-fixed").length;
    server.setCertificate(chainPem(leaf, rsaIntermediate), leaf.keyPem);
    const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect([checked.chain.length, checked.status, checked.revocation.status]).toEqual([2, "revoked", "revoked"]);
    expect(responder.requests.filter((request) => request.path === "/ocsp-fixed").length).toBeGreaterThan(asked);
    expect((await events(h, created.id)).filter((e: { type: string }) => e.type === "certificate.revoked").length).toBe(1);
  });

  test("a name behind two addresses, one node serving a revoked leaf: that endpoint and the certificate are revoked, announced once, naming the endpoint", async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `tworevoked.${TEST_DOMAIN}`;
    const good = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-multi`], daysLeft: 30 });
    const bad = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-multi`], daysLeft: 90, freshKey: true });
    answerOcsp("/ocsp-multi", rsaIntermediate, new Map([[good.cert.serialNumber, "good"], [bad.cert.serialNumber, "revoked"]]));
    const first = await serve(good, rsaIntermediate);
    const second = await startTlsServer({ cert: chainPem(bad, rsaIntermediate), key: bad.keyPem, port: first.port, host: "127.0.0.2" });
    servers.push(second);
    const h = await harness({ resolve: [{ pattern: domain, address: "127.0.0.1", addresses: ["127.0.0.1", "127.0.0.2"] }, { pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }] });
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: first.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    // The certificate-level fields follow the good leaf (it expires first); the other node's leaf is revoked.
    expect([shown.status, shown.statusReason, shown.revocation.status, shown.endpoints.map((e: any) => [e.address, e.status])]).toEqual([
      "revoked",
      "revoked",
      "good",
      [["127.0.0.1", "expiring"], ["127.0.0.2", "revoked"]],
    ]);
    for (let i = 0; i < 2; i++) expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    const revoked = (await events(h, created.id)).filter((e: { type: string }) => e.type === "certificate.revoked");
    expect(revoked.map((e: any) => e.data.endpoint)).toEqual([
      { address: "127.0.0.2", serialNumber: bad.cert.serialNumber.toUpperCase().replace(/^00(?=[89A-F])/, "").match(/../g)!.join(":"), expiresAt: bad.cert.notAfter.toISOString() },
    ]);
  });

  test("a hold (certificateHold) the CA releases: revoked, announced once, then valid again once its answer is out of date", async () => {
    const clock = new FakeClock(Date.now());
    const h = await harness({}, clock);
    const { rsaIntermediate } = await testPki();
    const domain = `held.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: rsaIntermediate, keyType: "rsa", dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-hold`] });
    const statuses = new Map<string, "good" | "revoked" | "held">([[leaf.cert.serialNumber, "held"]]);
    answerOcsp("/ocsp-hold", rsaIntermediate, statuses, 3_600_000, () => clock.now());
    const server = await serve(leaf, rsaIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const held = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([held.status, held.revocation.reason]).toEqual(["revoked", "certificateHold"]);
    statuses.set(leaf.cert.serialNumber, "good");
    // Until the hold's answer is out of date, it stands; then the CA is asked again.
    expect(expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200).status).toBe("revoked");
    clock.advance(2 * 3_600_000);
    const released = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect([released.status, released.revocation.status]).toEqual(["valid", "good"]);
    expect((await events(h, created.id)).map((e: { type: string }) => e.type).filter((type: string) => type === "certificate.revoked")).toHaveLength(1);
  });

  test("a good leaf is valid; re-checks reuse the cached answer until nextUpdate: the responder is asked once", async () => {
    const h = await harness();
    const { ecIntermediate } = await testPki();
    const domain = `good.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-b`] });
    answerOcsp("/ocsp-b", ecIntermediate, new Map([[leaf.cert.serialNumber, "good"]]));
    const server = await serve(leaf, ecIntermediate);
    const before = responder.requests.filter((r) => r.path === "/ocsp-b").length;
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    for (let i = 0; i < 5; i++) await h.request("POST", `/v1/certificates/${created.id}/check`);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([shown.status, shown.revocation.status, shown.revocation.source]).toEqual(["valid", "good", "ocsp"]);
    expect(responder.requests.filter((r) => r.path === "/ocsp-b").length).toBe(before + 1);
    expect((await events(h, created.id)).map((e: { type: string }) => e.type)).toEqual([]);
  });

  test("every source failing is unavailable and changes nothing else (soft-fail)", async () => {
    const h = await harness();
    const { ecIntermediate } = await testPki();
    const domain = `softfail.${TEST_DOMAIN}`;
    const port = await refusedPort();
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`http://127.0.0.1:${port}/ocsp`], crlUrls: [`${responder.url}/missing.crl`] });
    const server = await serve(leaf, ecIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([shown.status, shown.statusReason]).toEqual(["valid", null]);
    expect(shown.revocation).toEqual({ status: "unavailable", source: null, checkedAt: expect.stringMatching(/Z$/), revokedAt: null, reason: null });
    expect((await events(h, created.id)).map((e: { type: string }) => e.type)).toEqual([]);
  });

  test("revoked via the CRL, then replaced by a new certificate: revoked announced once, then renewed and valid", async () => {
    const h = await harness();
    const { ecIntermediate } = await testPki();
    const domain = `replaced.${TEST_DOMAIN}`;
    const old = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], crlUrls: [`${responder.url}/ec.crl`] });
    const list = await crl({ issuer: ecIntermediate, revoked: [{ serial: old.cert.serialNumber, reason: 1 }] });
    const previous = responder.answer;
    responder.answer = (r) => (r.path === "/ec.crl" ? { body: list } : previous(r));
    const server = await serve(old, ecIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    expect(created.status).toBe("revoked");
    const replacement = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], crlUrls: [`${responder.url}/ec.crl`], daysLeft: 120 });
    server.setCertificate(chainPem(replacement, ecIntermediate), replacement.keyPem);
    const checked = expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect([checked.status, checked.revocation.status, checked.revocation.source]).toEqual(["valid", "good", "crl"]);
    expect((await events(h, created.id)).map((e: { type: string }) => e.type).reverse()).toEqual(["certificate.revoked", "certificate.renewed"]);
  });

  test("CERTKEEPER_REVOCATION=off: not_checked, nobody asked", async () => {
    const h = await harness({ revocation: false });
    const { ecIntermediate } = await testPki();
    const domain = `off.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-off`] });
    const server = await serve(leaf, ecIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(shown.revocation).toEqual({ status: "not_checked", source: null, checkedAt: null, revokedAt: null, reason: null });
    expect(responder.requests.some((r) => r.path === "/ocsp-off")).toBe(false);
  });

  test("an untrusted chain is not_checked and nobody is asked", async () => {
    const h = await harness();
    const { strangerRoot } = await testPki();
    const domain = `stranger.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: strangerRoot, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-stranger`] });
    const server = await serve(leaf, strangerRoot);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect([shown.status, shown.revocation.status]).toEqual(["invalid", "not_checked"]);
    expect(responder.requests.some((r) => r.path === "/ocsp-stranger")).toBe(false);
  });

  test("GET /metrics shows each certificate's revocation status and the requests sent", async () => {
    const h = await harness({ metricsToken: "m-token" });
    const { ecIntermediate } = await testPki();
    const domain = `metrics-revoked.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-m`] });
    answerOcsp("/ocsp-m", ecIntermediate, new Map([[leaf.cert.serialNumber, "revoked"]]));
    const server = await serve(leaf, ecIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const text = await (await h.app.handle(new Request("http://localhost/metrics", { headers: { authorization: "Bearer m-token" } }))).text();
    expect(text).toContain(
      `certkeeper_certificate_revocation_status{organization="${h.org.id}",mode="live",domain="${domain}",port="${server.port}",certificate_id="${created.id}",status="revoked",revocation="revoked"} 1`,
    );
    expect(text).toMatch(/certkeeper_revocation_requests_total\{source="ocsp"\} [1-9]/);
    expect(text).toContain('certkeeper_certificates{status="revoked"} 1');
  });
});

describe("the dashboard", () => {
  test("shows a revoked certificate as revoked, with the reason and the source", async () => {
    const h = await harness();
    const { ecIntermediate } = await testPki();
    const domain = `dashboard-revoked.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-d`] });
    answerOcsp("/ocsp-d", ecIntermediate, new Map([[leaf.cert.serialNumber, "revoked"]]));
    const server = await serve(leaf, ecIntermediate);
    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const owner = await signedInUser(h, "owner");
    const page = await owner.browser.get("/?mode=live");
    const row = new RegExp(`<tr data-certificate-id="${created.id}"[^>]*>([\\s\\S]*?)</tr>`).exec(page.text)![1]!;
    expect(row).toContain('<span class="badge status-revoked">revoked</span>');
    expect(row).toContain("keyCompromise, since 2026-11-01 00:00 UTC (OCSP)");
  });
});

describe("stapled OCSP", () => {
  test("a server that staples: Bun's node:tls does not hand the response over, so the responder is asked (README: stapling)", async () => {
    const h = await harness();
    const { ecIntermediate } = await testPki();
    const domain = `stapled.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-stapled`] });
    answerOcsp("/ocsp-stapled", ecIntermediate, new Map([[leaf.cert.serialNumber, "good"]]));
    const dir = mkdtempSync(join(tmpdir(), "certkeeper-staple-"));
    writeFileSync(join(dir, "leaf.pem"), leaf.certPem);
    writeFileSync(join(dir, "chain.pem"), ecIntermediate.certPem);
    writeFileSync(join(dir, "leaf.key"), leaf.keyPem);
    writeFileSync(join(dir, "status.der"), ocspAnswer({ leaf, issuer: ecIntermediate, status: { good: true } }));
    const port = await refusedPort();
    const openssl: ChildProcess = spawn("/usr/bin/openssl", [
      "s_server", "-accept", `127.0.0.1:${port}`, "-cert", join(dir, "leaf.pem"), "-cert_chain", join(dir, "chain.pem"), "-key", join(dir, "leaf.key"),
      "-status_file", join(dir, "status.der"), "-naccept", "10", "-quiet",
    ], { stdio: "ignore" });
    try {
      for (let i = 0; i < 50; i++) {
        const ok = await new Promise<boolean>((resolve) => {
          const socket = require("node:net").connect(port, "127.0.0.1", () => { socket.destroy(); resolve(true); });
          socket.on("error", () => resolve(false));
        });
        if (ok) break;
        await Bun.sleep(50);
      }
      const before = responder.requests.filter((r) => r.path === "/ocsp-stapled").length;
      const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
      const shown = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
      const runtimeHandsOverStapling = typeof Bun === "undefined";
      expect(shown.revocation.status).toBe("good");
      expect(shown.revocation.source).toBe(runtimeHandsOverStapling ? "ocsp_stapled" : "ocsp");
      expect(responder.requests.filter((r) => r.path === "/ocsp-stapled").length).toBe(before + (runtimeHandsOverStapling ? 0 : 1));
    } finally {
      openssl.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("several processes", () => {
  test("an answer one process obtained is used by another on the same libSQL server: the responder is asked once", async () => {
    const { startSqld } = await import("./support/sqld.ts");
    const { openLibsqlStore } = await import("../adapters/libsql/mod.ts");
    const sqld = await startSqld();
    const { root, ecIntermediate } = await testPki();
    const domain = `shared.${TEST_DOMAIN}`;
    const leaf = await createLeaf({ issuer: ecIntermediate, dnsNames: [domain], ocspUrls: [`${responder.url}/ocsp-shared`] });
    answerOcsp("/ocsp-shared", ecIntermediate, new Map([[leaf.cert.serialNumber, "good"]]));
    const server = await serve(leaf, ecIntermediate);
    const config = { ...DEFAULT_CONFIG, alertPolicy: "days" as const, allowPrivateTargets: true, resolve: [{ pattern: `*.${TEST_DOMAIN}`, address: "127.0.0.1" }], tlsTimeoutMs: 2000 };
    const processes = [];
    for (let i = 0; i < 2; i++) {
      const store = await openLibsqlStore({ url: sqld.url });
      const transports = createTransports(config, new TrustStore([root.certPem]), { outboxDir: "/tmp/certkeeper-test-outbox" });
      processes.push({ h: await createHarness({ store, transports }), store, transports });
    }
    try {
      const before = responder.requests.filter((r) => r.path === "/ocsp-shared").length;
      for (const { h } of processes) {
        const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
        expect(expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200).revocation.status).toBe("good");
      }
      expect(responder.requests.filter((r) => r.path === "/ocsp-shared").length).toBe(before + 1);
    } finally {
      for (const { h, transports } of processes) {
        await h.close();
        await transports.close();
      }
      await sqld.close();
    }
  });
});
