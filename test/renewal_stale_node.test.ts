/**
 * A name whose nodes all serve the current leaf gains a node serving an older leaf, which expires
 * first (a scale-out from a stale image, or a node down since before the certificate was added). Its
 * alert is owed (the old leaf past its renewal deadline, or inside a threshold). Once that node is
 * fixed and every answering endpoint serves the current leaf again, `certificate.renewed` is owed
 * too (CONTRACT §7: a new certificate with a later expiry; §20: once every answering endpoint serves
 * the new one), and it is the event that resolves the PagerDuty incident the alert opened. The move to
 * the older leaf is no renewal to it: it is the leaf to be replaced.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { applyCheck, type CheckOutcome } from "../core/monitor/mod.ts";
import { presentCertificate } from "../core/certificates/mod.ts";
import type { CertificateDetails, CertificateRecord } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, certificateRecord, NOW } from "./support/store_conformance/factories.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { twoNodes, type TwoNodes } from "./support/two_nodes.ts";
import { nodesOutcome } from "./support/nodes_outcome.ts";

setDefaultTimeout(120_000);

let world: TwoNodes | undefined;
afterAll(() => world?.close());

const scope = { organizationId: "org_0123456789abcdefAB", mode: "live" as const };

const nodes = (entries: Array<[string, CertificateDetails]>, at: number): CheckOutcome => nodesOutcome(entries, at);

describe("a stale node joins, then is fixed", () => {
  for (const alertPolicy of ["days", "renewal"] as const) {
    test(`${alertPolicy}: certificate.renewed once every node serves the current leaf again`, () => {
      const domain = `stale-${alertPolicy}.example.com`;
      // The old leaf: 90 days, 10 days left (past its deadline; the 14-day threshold crossed).
      const old = certificateDetails(domain, { notBefore: NOW - 80 * DAY, notAfter: NOW + 10 * DAY });
      // The current leaf, renewed 20 days ago.
      const current = certificateDetails(domain, { notBefore: NOW - 20 * DAY, notAfter: NOW + 70 * DAY });
      const policy = { intervalMs: 6 * HOUR, alertPolicy, failuresBeforeUnreachable: 1, retryDelaysMs: [] };
      let record: CertificateRecord = certificateRecord(scope, { domain, details: current, alertPolicy, alertThresholds: [30, 14, 7, 3, 1] });
      const types: Array<[string, string]> = [];
      const check = (at: number, entries: Array<[string, CertificateDetails]>, isNew = false) => {
        const applied = applyCheck(record, nodes(entries, at), at, policy, { isNew });
        for (const e of applied.events) {
          const serial = ((e.data.endpoint as any)?.serialNumber ?? (e.data.certificate as any).serialNumber) as string;
          types.push([e.type, serial === old.serialNumber ? "old" : "current"]);
        }
        record = applied.record;
      };
      check(NOW, [["192.0.2.1", current], ["192.0.2.2", current]], true);
      check(NOW + 6 * HOUR, [["192.0.2.1", current], ["192.0.2.2", current]]);
      expect(types).toEqual([]);
      // A third node joins with the stale leaf: its alert is due.
      check(NOW + 12 * HOUR, [["192.0.2.1", current], ["192.0.2.2", current], ["192.0.2.3", old]]);
      expect(types).toEqual([[alertPolicy === "days" ? "certificate.expiring" : "certificate.renewal_overdue", "old"]]);
      // Fixed: every node serves the current leaf.
      for (let at = NOW + 18 * HOUR; at <= NOW + 3 * DAY; at += 6 * HOUR) check(at, [["192.0.2.1", current], ["192.0.2.2", current], ["192.0.2.3", current]]);
      const view = presentCertificate(record, NOW + 3 * DAY) as any;
      expect([view.serialNumber, view.status]).toEqual([current.serialNumber, "valid"]);
      expect(types).toEqual([
        [alertPolicy === "days" ? "certificate.expiring" : "certificate.renewal_overdue", "old"],
        ["certificate.renewed", "current"],
      ]);
    });
  }
});

describe("end to end: a node down at the add comes back with the stale leaf, then is fixed", () => {
  test("a node down at the add, back with the old leaf, then fixed: certificate.renewed once every answering endpoint serves the new leaf", async () => {
    const start = Date.now();
    const domain = `downatadd.${TEST_DOMAIN}`;
    world = await twoNodes(domain, start);
    const { h, clock, leaf, serve } = world;

    // The old leaf: 200 days, past its deadline. The new one: 90 days, issued a day ago (it expires after the old one).
    const old = await leaf(start - 155 * DAY, 200 * DAY, "0d11");
    const fresh = await leaf(start - DAY, 90 * DAY, "0d12");
    const a = await serve(fresh);
    // Node .2 does not answer at the add.
    const added = expectData(await h.request("POST", "/v1/certificates", { body: { domain, port: a.port } }), 201);
    expect(expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200).serialNumber).toBe("0D:12");
    const events = async () =>
      (expectData(await h.request("GET", "/v1/events?limit=100"), 200) as any[])
        .filter((e) => e.certificateId === added.id)
        .reverse()
        .map((e) => [e.type, e.data.endpoint?.serialNumber ?? e.data.certificate.serialNumber]);

    // It comes back with the old leaf, past its deadline: one renewal_overdue for it.
    const b = await serve(old, { host: "127.0.0.2", port: a.port });
    for (let at = start + HOUR; at <= start + 12 * HOUR; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    expect(await events()).toEqual([["certificate.renewal_overdue", "0D:11"]]);

    // Then it is fixed: every node serves the new leaf.
    await world.replace(b, fresh);
    for (let at = start + 13 * HOUR; at <= start + 3 * DAY; at += HOUR) {
      clock.set(at);
      await h.core.services.scheduler.runDue();
    }
    const got = expectData(await h.request("GET", `/v1/certificates/${added.id}`), 200);
    expect(got.endpoints.map((e: any) => e.serialNumber)).toEqual(["0D:12", "0D:12"]);
    expect([got.status, got.renewal.state]).toEqual(["valid", "not_due"]);
    // CONTRACT §20: certificate.renewed once every answering endpoint serves the new leaf.
    expect(await events()).toEqual([
      ["certificate.renewal_overdue", "0D:11"],
      ["certificate.renewed", "0D:12"],
    ]);
  });
});
