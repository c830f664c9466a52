/**
 * CONTRACT §11 with §7: a name behind two addresses where the node whose leaf expires first is fine and
 * the other serves a leaf for another name. The status is judged over every endpoint (`invalid`), and
 * `certificate.invalid` is raised with it; fixing that node raises `certificate.recovered`: the status
 * never says invalid without its alert. Real TLS servers on 127.0.0.1 and 127.0.0.4.
 */
import { afterEach, expect, test } from "bun:test";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

for (const store of ["memory", "libsql"] as const) {
  test(`${store}: a later-expiring node serving a leaf for another name makes the certificate invalid, with certificate.invalid, then recovered`, async () => {
    const { rsaIntermediate } = await testPki();
    const domain = `pair-${store}.nodes.${TEST_DOMAIN}`;
    const good = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], daysLeft: 60 });
    const wrong = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`other.${TEST_DOMAIN}`], daysLeft: 90 });
    const first = await startTlsServer({ cert: chainPem(good, rsaIntermediate), key: good.keyPem });
    cleanups.push(() => first.close());
    const second = await startTlsServer({ cert: chainPem(wrong, rsaIntermediate), key: wrong.keyPem, port: first.port, host: "127.0.0.4" });
    cleanups.push(() => second.close());
    const h = await createHarness({ store, config: { resolve: parseResolveRules(`*.nodes.${TEST_DOMAIN}=127.0.0.1|127.0.0.4`) } });
    cleanups.push(() => h.close());

    const created = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: first.port, alertThresholds: [] } }), 201);
    const cert = expectData(await h.request("GET", `/v1/certificates/${created.id}`), 200);
    expect(cert.endpoints.map((e: any) => [e.address, e.status, e.statusReason])).toEqual([
      ["127.0.0.1", "valid", null],
      ["127.0.0.4", "invalid", "hostname_mismatch"],
    ]);
    expect([cert.status, cert.statusReason]).toEqual(["invalid", "hostname_mismatch"]);
    const types = async () => (expectData(await h.request("GET", "/v1/events"), 200) as any[]).filter((e) => e.certificateId === created.id).map((e) => e.type).reverse();
    expect(await types()).toEqual(["certificate.invalid"]);

    // Checked again: nothing more. The node fixed: recovered, once.
    expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect(await types()).toEqual(["certificate.invalid"]);
    second.setCertificate(chainPem(good, rsaIntermediate), good.keyPem);
    expect(expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200).status).toBe("valid");
    expectData(await h.request("POST", `/v1/certificates/${created.id}/check`), 200);
    expect(await types()).toEqual(["certificate.invalid", "certificate.recovered"]);
  });
}
