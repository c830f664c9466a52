/**
 * CONTRACT §20's issuances replaced by later ones (core/deployment/pending.ts, its pure rules):
 *
 * - "one `certificate.not_deployed` … per certificate and issuance": an issuance already announced,
 *   then replaced by a later one while an endpoint still lags, is not announced a second time; the
 *   later one is announced once, when its own grace ends.
 * - An issuance replaced before its grace ended, and served by every endpoint since, is forgotten: the
 *   endpoints are next looked at when the later issuance's grace ends, not at the earlier one's.
 */
import { describe, expect, test } from "bun:test";
import { deploymentCheckAt, deploymentDueAt, judgeDeployment, supersedeDeployment } from "../core/deployment/mod.ts";
import type { CertificateDetails, EndpointRecord, PendingDeployment } from "../core/base/records.ts";
import { DAY, HOUR } from "../core/base/time.ts";
import { certificateDetails, NOW } from "./support/store_conformance/factories.ts";

const domain = "rollout.example.com";

function issuance(issuedAt: number, seenAt: number): PendingDeployment {
  return { issuedAt, notAfter: issuedAt + 90 * DAY, fingerprintSha256: null, issuer: "certkeeper Test CA", seenAt, announced: false };
}

function endpoint(address: string, details: CertificateDetails): EndpointRecord {
  return { address, fingerprint: details.fingerprintSha256!, details, problem: null, failure: null, tls: null };
}

describe("pending deployments (CONTRACT §20)", () => {
  test("an announced issuance replaced by a later one is not announced again; the later one once, at its own grace's end", () => {
    const old = certificateDetails(domain, { notBefore: NOW - 60 * DAY, notAfter: NOW + 30 * DAY });
    const lagging = [endpoint("127.0.0.1", old), endpoint("127.0.0.2", old)];
    const first = issuance(NOW - 2 * HOUR, NOW);
    const announced: number[] = [];
    let pending: PendingDeployment | null = first;
    // The first issuance's grace (24 hours) passes with no endpoint serving it: announced once.
    for (const at of [NOW + HOUR, deploymentDueAt(first), deploymentDueAt(first) + HOUR]) {
      const judged = judgeDeployment(pending, lagging, at);
      announced.push(...judged.notDeployed.map((n) => Date.parse(n.deployment.issuedAt)));
      pending = judged.deployment;
    }
    expect(announced).toEqual([first.issuedAt]);
    expect(pending?.announced).toBe(true);

    // A later issuance is recorded while both endpoints still serve the old leaf.
    const seen = deploymentDueAt(first) + 2 * HOUR;
    const second = issuance(seen - HOUR, seen);
    pending = supersedeDeployment(pending, second);
    for (const at of [seen + HOUR, seen + 12 * HOUR, deploymentDueAt(second), deploymentDueAt(second) + HOUR]) {
      const judged = judgeDeployment(pending, lagging, at);
      announced.push(...judged.notDeployed.map((n) => Date.parse(n.deployment.issuedAt)));
      pending = judged.deployment;
    }
    expect(announced).toEqual([first.issuedAt, second.issuedAt]);
  });

  test("an issuance served everywhere, replaced by a later one still pending, is forgotten: the next look is at the later one's grace end", () => {
    const first = issuance(NOW - HOUR, NOW);
    const second = issuance(NOW + 2 * HOUR, NOW + 3 * HOUR);
    const pending = supersedeDeployment(first, second);
    // Both endpoints serve the first issuance (but not yet the second) an hour after it was recorded.
    const servingFirst = certificateDetails(domain, { notBefore: first.issuedAt, notAfter: first.notAfter });
    const at = NOW + 4 * HOUR;
    const judged = judgeDeployment(pending, [endpoint("127.0.0.1", servingFirst), endpoint("127.0.0.2", servingFirst)], at);
    expect(judged.notDeployed).toEqual([]);
    expect(deploymentCheckAt(judged.deployment, at)).toBe(deploymentDueAt(second));
  });
});
