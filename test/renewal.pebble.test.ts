/**
 * Renewal, not age, end to end with a real ACME CA and a real ACME client (CONTRACT §18): Debian's
 * pebble issues certificates that live 33 seconds, lego obtains and renews them, a TLS server on
 * 127.0.0.1 serves each one as it is installed, and a real `certkeeper serve` process watches the name
 * (a six-hour check interval: the twelfth-of-the-lifetime rule and the deadline checks drive it) and
 * sends its events to a real webhook receiver.
 *
 * 1. lego renews at a third of the lifetime, four times: only `certificate.renewed`, one per renewal;
 *    the certificate stays `valid` and `renewal.state` `not_due`.
 * 2. lego stops: one `certificate.renewal_overdue` for the last serial at its deadline (two thirds of
 *    the lifetime), the certificate `expiring` / `renewal_overdue` / `overdue`, then `certificate.expired`
 *    after notAfter, and nothing else.
 *
 * Real time: about a minute and a half, nearly all of it waiting on the certificates' clocks.
 * Without pebble or lego (apt-get install pebble lego, or CERTKEEPER_TEST_PEBBLE / CERTKEEPER_TEST_LEGO)
 * the tests are reported as skipped, with why.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { Admin } from "../core/accounts/admin.ts";
import { systemClock } from "../core/base/time.ts";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { findAcmeTools, legoClient, pebbleHttpsLeaf, startPebble, type Lego, type LegoCertificate, type Pebble } from "./support/acme.ts";
import { startServe, tempWorkspace, type ServeProcess, type Workspace } from "./support/cli.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { startHttpReceiver, type HttpReceiver, type ReceivedRequest } from "./support/receivers.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";

/** Pebble's certificateValidityPeriod: each certificate lives 32 s (notAfter is its last second). */
const VALIDITY_SECONDS = 33;
/**
 * Renewals at a third of the lifetime (as ACME clients renew a certificate this short), leaving a third
 * of it, 11 s, before the deadline for lego's run on a loaded machine. Four span a lifetime and a third.
 */
const RENEWALS = 4;
/**
 * How late after the moment it is due a check may run on a loaded two-core machine (the scheduler looks
 * every second; a check takes a handshake). Half the time from the deadline to expiry: a check later
 * than that would be a bug worth seeing, not load.
 */
const LATE_SLACK_MS = 5_000;

setDefaultTimeout(60_000);

const tools = findAcmeTools();

if (!tools.found) {
  describe("renewal with a real ACME CA (pebble) and client (lego)", () => {
    test.skip(`skipped: ${tools.reason}`, () => {});
  });
  console.warn(`renewal.pebble.test.ts: skipped: ${tools.reason}`);
} else {
  describeRenewalTests(tools.pebble, tools.lego);
}

/** The renewal deadline of a leaf without ARI, from CONTRACT §18: two thirds of a lifetime under 10 days. */
const deadlineOf = (leaf: LegoCertificate) => leaf.notBefore + Math.ceil(((leaf.notAfter - leaf.notBefore) * 2) / 3);
const iso = (ms: number) => new Date(ms).toISOString();
const twelfthOf = (leaf: LegoCertificate) => (leaf.notAfter - leaf.notBefore) / 12;

/** Resolves once `condition` holds; fails naming `what` after `timeoutMs`. */
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}
/** A serial as hexadecimal digits, whether written "7A:05:…" (certkeeper) or "7a05…" (x509), without DER's sign byte. */
const plainSerial = (serial: string) => serial.replace(/:/g, "").toLowerCase().replace(/^00(?=[89a-f])/, "");

function describeRenewalTests(pebblePath: string, legoPath: string) {
  describe("renewal with a real ACME CA (pebble) and client (lego)", () => {
    const domain = `acme.${TEST_DOMAIN}`;
    let ws: Workspace;
    let pebble: Pebble;
    let lego: Lego;
    let site: TlsTestServer;
    let receiver: HttpReceiver;
    let serve: ServeProcess;
    let apiKey: string;
    let signingSecret: string;
    let certificateId: string;
    /** Every certificate the TLS server has served, in order, and when each was installed. */
    const installed: Array<LegoCertificate & { installedAt: number }> = [];

    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${serve.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body ? { "content-type": "application/json" } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    const getCertificate = async () => (await call("GET", `/v1/certificates/${certificateId}`)).body.data;

    /** What failed, with what the processes said. */
    const explain = async (steps: () => Promise<void>) => {
      try {
        await steps();
      } catch (error) {
        const received = receiver.requests.map((r) => `${r.json?.type} ${r.json?.createdAt} ${r.json?.data?.certificate?.serialNumber}`);
        throw new Error(
          `${(error as Error).message}\n  installed: ${installed.map((c) => `${c.serialNumber} ${iso(c.notBefore)}–${iso(c.notAfter)} at ${iso(c.installedAt)}`).join("\n    ")}` +
            `\n  received: ${received.join("\n    ")}\n  serve stderr: ${serve.output().stderr.slice(-2000)}\n  pebble: ${pebble.output().slice(-1000)}`,
        );
      }
    };

    beforeAll(async () => {
      ws = tempWorkspace("certkeeper-pebble-");
      const { root, rsaIntermediate } = await testPki();
      const testRootFile = join(ws.dir, "test-root.pem");
      writeFileSync(testRootFile, root.certPem);
      pebble = await startPebble(pebblePath, {
        dir: join(ws.dir, "pebble"),
        validitySeconds: VALIDITY_SECONDS,
        https: { leaf: await pebbleHttpsLeaf(rsaIntermediate), intermediates: [rsaIntermediate], rootPem: root.certPem },
      });
      // certkeeper trusts pebble's issuing root, as an operator of a private ACME CA would configure it.
      const pebbleRootFile = join(ws.dir, "pebble-root.pem");
      writeFileSync(pebbleRootFile, pebble.rootPem);
      lego = legoClient(legoPath, { dir: join(ws.dir, "lego"), directoryUrl: pebble.directoryUrl, caFile: testRootFile, domain });

      receiver = await startHttpReceiver();

      // The account, made in-process on the database file (a CLI process per step costs seconds here).
      const store = await openLibsqlStore({ url: ws.env.CERTKEEPER_DATABASE_URL! });
      const admin = new Admin(store, systemClock);
      const org = await admin.createOrganization({ name: "ACME users", plan: "pro" });
      const user = await admin.createUser({ organizationId: org.id, email: "owner@acme.test", role: "owner" });
      apiKey = (await admin.createApiKey({ userId: user.id, name: "pebble", mode: "live" })).key;
      await store.close();
      serve = await startServe({
        env: {
          ...ws.env,
          CERTKEEPER_RESOLVE: `${domain}=127.0.0.1`,
          CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
          CERTKEEPER_EXTRA_CA_FILE: pebbleRootFile,
          // Far longer than the test: the certificates' own lifetimes must drive the checks.
          CERTKEEPER_CHECK_INTERVAL: "6h",
          CERTKEEPER_TLS_TIMEOUT: "5s",
        },
        cwd: ws.dir,
      });
      const channel = await call("POST", "/v1/channels", { type: "webhook", name: "Receiver", config: { url: `${receiver.url}/hook` } });
      expect(channel.status).toBe(201);
      signingSecret = channel.body.data.config.signingSecret;

      // The first certificate, issued once everything else is ready: the clock of its lifetime runs.
      const first = await lego.obtain();
      const installedAt = Date.now();
      site = await startTlsServer({ cert: first.certPem, key: first.keyPem });
      installed.push({ ...first, installedAt });
      const added = await call("POST", "/v1/certificates", { domain, port: site.port });
      expect(added.status).toBe(201);
      certificateId = added.body.data.id;
      const certificate = await getCertificate();
      expect({ status: certificate.status, alertPolicy: certificate.alertPolicy, renewal: certificate.renewal.state }).toEqual({
        status: "valid",
        alertPolicy: "renewal",
        renewal: "not_due",
      });
      expect(plainSerial(certificate.serialNumber)).toBe(plainSerial(first.serialNumber));
    });

    afterAll(async () => {
      const code = await serve?.stop();
      await Promise.all([site?.close(), receiver?.close(), pebble?.close()]);
      ws?.cleanup();
      expect(code).toBe(0);
    });

    /** Every webhook request is signed with the channel's secret, and each event arrives once. */
    const expectSignedOnce = (requests: ReceivedRequest[]) => {
      const webhook = new Webhook(signingSecret);
      for (const request of requests) expect(webhook.verify(request.body, request.headers)).toEqual(request.json);
      expect(new Set(requests.map((r) => r.json.id)).size).toBe(requests.length);
    };

    test(
      "lego renewing at a third of the lifetime raises only certificate.renewed, one per renewal, and the certificate stays not_due",
      () =>
        explain(async () => {
          // Watch the certificate as a user would, every second, while the renewing client runs.
          const seen = new Set<string>();
          let watching = true;
          const watcher = (async () => {
            while (watching) {
              const certificate = await getCertificate();
              seen.add(JSON.stringify({ status: certificate.status, statusReason: certificate.statusReason, renewal: certificate.renewal?.state }));
              await Bun.sleep(1000);
            }
          })();
          const handshakesBefore = site.connections();
          const startedAt = Date.now();

          try {
            for (let renewal = 0; renewal < RENEWALS; renewal++) {
              const current = installed.at(-1)!;
              await Bun.sleep(Math.max(0, current.notBefore + (current.notAfter - current.notBefore) / 3 - Date.now()));
              const next = await lego.renew();
              const installedAt = Date.now();
              site.setCertificate(next.certPem, next.keyPem);
              installed.push({ ...next, installedAt });
              // The client kept its schedule (a machine too loaded for this test says so here, not below).
              expect(Date.now()).toBeLessThan(deadlineOf(current));
            }
            // The last renewal is seen (at the latest by the check at the replaced leaf's deadline).
            await receiver.waitFor(RENEWALS, Math.max(0, deadlineOf(installed.at(-2)!) - Date.now()) + LATE_SLACK_MS);
          } finally {
            // Stopped whatever happened: a watcher left running would fail once the server stops.
            watching = false;
            await watcher;
          }
          const elapsed = Date.now() - startedAt;

          const requests = receiver.requests.slice();
          expect(requests.map((r) => r.json.type)).toEqual(Array(RENEWALS).fill("certificate.renewed"));
          requests.forEach((request, i) => {
            const [previous, renewed] = [installed[i]!, installed[i + 1]!];
            const { data, createdAt } = request.json;
            expect({ serial: plainSerial(data.certificate.serialNumber), previous: plainSerial(data.previous.serialNumber) }).toEqual({
              serial: plainSerial(renewed.serialNumber),
              previous: plainSerial(previous.serialNumber),
            });
            expect(data.previous.expiresAt).toBe(iso(previous.notAfter));
            // Seen after it was installed, and no later than the check at the replaced leaf's deadline.
            expect(Date.parse(createdAt)).toBeGreaterThanOrEqual(renewed.installedAt);
            expect(Date.parse(createdAt)).toBeLessThanOrEqual(deadlineOf(previous) + LATE_SLACK_MS);
            expect(data.certificate.renewal).toMatchObject({ state: "not_due", deadline: iso(deadlineOf(renewed)) });
          });
          expectSignedOnce(requests);

          expect([...seen]).toEqual([JSON.stringify({ status: "valid", statusReason: null, renewal: "not_due" })]);
          const last = installed.at(-1)!;
          const certificate = await getCertificate();
          expect(plainSerial(certificate.serialNumber)).toBe(plainSerial(last.serialNumber));
          expect(certificate.renewal).toEqual({
            deadline: iso(deadlineOf(last)),
            source: "lifetime",
            window: null,
            explanationUrl: null,
            state: "not_due",
            checkedAt: null,
          });

          // Re-checked every twelfth of the lifetime (2.75 s), not every six hours: half that count is
          // still above what the moments due alone (each replaced leaf's deadline, one check per renewal)
          // would make.
          const twelfth = twelfthOf(last);
          expect(site.connections() - handshakesBefore).toBeGreaterThanOrEqual(Math.floor(elapsed / twelfth / 2));
          expect(Math.floor(elapsed / twelfth / 2)).toBeGreaterThan(RENEWALS + 2);
        }),
      240_000,
    );

    test(
      "when lego stops renewing: one certificate.renewal_overdue for the last serial at its deadline, then certificate.expired after notAfter, nothing else",
      () =>
        explain(async () => {
          const last = installed.at(-1)!;
          const deadline = deadlineOf(last);
          const id = certificateId;

          const [overdue] = (await receiver.waitFor(RENEWALS + 1, Math.max(0, last.notAfter - Date.now()) + LATE_SLACK_MS)).slice(RENEWALS);
          expect(overdue!.json).toMatchObject({
            type: "certificate.renewal_overdue",
            data: {
              deadline: iso(deadline),
              source: "lifetime",
              window: null,
              daysUntilExpiry: 0,
              certificate: { status: "expiring", statusReason: "renewal_overdue", renewal: { state: "overdue", deadline: iso(deadline) } },
            },
          });
          expect(plainSerial(overdue!.json.data.certificate.serialNumber)).toBe(plainSerial(last.serialNumber));
          // Raised by the check at the deadline: not before it, and shortly after it.
          const overdueAt = Date.parse(overdue!.json.createdAt);
          expect(overdueAt).toBeGreaterThanOrEqual(deadline);
          expect(overdueAt - deadline).toBeLessThanOrEqual(LATE_SLACK_MS);

          // Until it expires, the certificate says so, and the renewal filter finds it.
          const certificate = await getCertificate();
          expect(Date.now()).toBeLessThan(last.notAfter);
          expect({ status: certificate.status, statusReason: certificate.statusReason, renewal: certificate.renewal }).toEqual({
            status: "expiring",
            statusReason: "renewal_overdue",
            renewal: { deadline: iso(deadline), source: "lifetime", window: null, explanationUrl: null, state: "overdue", checkedAt: null },
          });
          const ids = async (query: string) => (await call("GET", `/v1/certificates?${query}`)).body.data.map((c: any) => c.id);
          expect(await ids("renewal=overdue")).toEqual([id]);
          expect(await ids("renewal=overdue,requested")).toEqual([id]);
          expect(await ids("renewal=not_due")).toEqual([]);

          const [expired] = (await receiver.waitFor(RENEWALS + 2, Math.max(0, last.notAfter - Date.now()) + LATE_SLACK_MS)).slice(RENEWALS + 1);
          expect(expired!.json).toMatchObject({ type: "certificate.expired", data: { certificate: { status: "expired", statusReason: "expired" } } });
          expect(plainSerial(expired!.json.data.certificate.serialNumber)).toBe(plainSerial(last.serialNumber));
          const expiredAt = Date.parse(expired!.json.createdAt);
          expect(expiredAt).toBeGreaterThan(last.notAfter);
          expect(expiredAt - last.notAfter).toBeLessThanOrEqual(LATE_SLACK_MS);

          // Nothing else: two more checks of the expired leaf raise nothing.
          const handshakes = site.connections();
          await until(() => site.connections() >= handshakes + 2, 4 * twelfthOf(last) + LATE_SLACK_MS, "two checks after expiry");
          const after = await getCertificate();
          expect({ status: after.status, statusReason: after.statusReason, state: after.renewal.state }).toEqual({ status: "expired", statusReason: "expired", state: "overdue" });
          expect(receiver.requests.map((r) => r.json.type)).toEqual([
            ...Array(RENEWALS).fill("certificate.renewed"),
            "certificate.renewal_overdue",
            "certificate.expired",
          ]);
          expectSignedOnce(receiver.requests.slice(RENEWALS));
          const events = (await call("GET", "/v1/events")).body.data.toReversed();
          expect(events.map((e: any) => ({ id: e.id, type: e.type, deliveries: e.deliveries.map((d: any) => [d.status, d.attempts]) }))).toEqual(
            receiver.requests.map((r) => ({ id: r.json.id, type: r.json.type, deliveries: [["delivered", 1]] })),
          );
        }),
      120_000,
    );
  });
}
