/**
 * A pending deployment (CONTRACT §20) of a certificate whose servers do not answer when its grace
 * ends: no endpoint can be judged then, so nothing is raised, and the certificate keeps its usual
 * schedule (§18: never checked more often than the interval and the retries would alone). The first
 * check that reaches a server again judges the deployment: one `certificate.not_deployed`.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { HOUR, SECOND, DAY } from "../core/base/mod.ts";
import { namesKey } from "../core/deployment/mod.ts";
import { createHarness, expectData, testPki, TEST_DOMAIN } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer } from "./support/servers.ts";
import { FakeClock } from "./support/fake_clock.ts";

setDefaultTimeout(60_000);
const cleanups: Array<() => Promise<unknown> | unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

test("a dead host with a pending deployment past its grace is checked on its usual schedule, and judged once it answers", async () => {
  const domain = `dead-pending.${TEST_DOMAIN}`;
  const { rsaIntermediate } = await testPki();
  const clock = new FakeClock(Date.now());
  const h = await createHarness({ clock, config: { alertPolicy: "renewal", revocation: false, ari: false, tlsTimeoutMs: 1000 } });
  cleanups.push(() => h.close());
  const now = clock.now();
  const old = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain], notBefore: new Date(now - 10 * DAY), notAfter: new Date(now + 80 * DAY) });
  let server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem });
  const port = server.port;
  const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port } }), 201);
  const scope = { organizationId: h.org.id, mode: "live" as const };
  // A watch recorded a newer issuance of the same names (what the CT poller notes).
  const deployment = { issuedAt: now - HOUR, notAfter: now - HOUR + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper intermediates", seenAt: now, announced: false };
  expect(await h.store.certificates.noteIssuance(scope, { namesKey: namesKey([domain]), deployment })).toBe(1);
  // The server goes away; the grace passes.
  await server.close();
  clock.set(now + 25 * HOUR);
  expect(expectData(await h.request("POST", `/v1/certificates/${added.id}/check`), 200).status).toBe("unreachable");

  let checks = 0;
  let last = (await h.store.certificates.get(scope, added.id))!.lastCheckedAt;
  for (let i = 0; i < 70; i++) {
    clock.advance(SECOND);
    await h.core.services.scheduler.runDue();
    const at = (await h.store.certificates.get(scope, added.id))!.lastCheckedAt;
    if (at !== last) checks++;
    last = at;
  }
  // At most the unreachable retry's own check in those 70 s, and the next one at least its wait away.
  expect(checks).toBeLessThanOrEqual(2);
  const record = (await h.store.certificates.get(scope, added.id))!;
  expect(record.nextCheckAt - clock.now()).toBeGreaterThanOrEqual(15 * SECOND);
  expect(record.deployment).toMatchObject({ announced: false });

  // The server answers again, still with the old leaf: the next scheduled check raises not_deployed, once.
  server = await startTlsServer({ cert: chainPem(old, rsaIntermediate), key: old.keyPem, port });
  cleanups.push(() => server.close());
  clock.set(record.nextCheckAt);
  await h.core.services.scheduler.runDue();
  clock.advance(HOUR);
  await h.core.services.scheduler.runDue();
  const list = expectData(await h.request("GET", "/v1/events?limit=100"), 200) as Array<{ type: string; data: any }>;
  const raised = list.filter((e) => e.data.certificate?.id === added.id).map((e) => e.type);
  expect(raised.filter((type) => type === "certificate.not_deployed")).toHaveLength(1);
});
