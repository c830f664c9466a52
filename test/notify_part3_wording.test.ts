/**
 * The words of the Part III event kinds (core/notify/_describe.ts): the words every channel
 * carries (describeEvent feeds email, chat, PagerDuty and Telegram alike). Each test pins a branch
 * whose wrong side would tell the on-call person something false.
 */
import { describe, expect, test } from "bun:test";
import type { EventRecord } from "../core/base/records.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { certificate, events } from "./support/notify_world.ts";

const CREATED = Date.parse("2026-05-05T10:00:00.000Z");

function recorded(type: string, data: Record<string, unknown>): EventRecord {
  return { id: "evt_words", organizationId: "org_words", mode: "live", type, certificateId: "crt_words", data, createdAt: CREATED } as EventRecord;
}

const fact = (described: { facts: Array<{ name: string; value: string }> }, name: string) => described.facts.find((f) => f.name === name)?.value;

describe("certificate.renewal_overdue", () => {
  test("the deadline's source is named as it is: ARI's window for source ari, the lifetime for source lifetime", () => {
    // CONTRACT §18: renewal.source "ari" | "lifetime"; the deadline is the ARI window's end when known.
    const [type, ari] = events().overdue;
    expect(fact(describeEvent(recorded(type, ari as never)), "Deadline from")).toBe("the CA's renewal window (ARI)");
    const lifetime = { ...(ari as Record<string, unknown>), source: "lifetime", window: null };
    expect(fact(describeEvent(recorded(type, lifetime)), "Deadline from")).toBe("the certificate's lifetime");
  });
});

describe("certificate.not_deployed", () => {
  test("one lagging address is named in the headline; several are counted", () => {
    const [type, data] = events().notDeployed;
    const one = describeEvent(recorded(type, data as never));
    expect(one.headline).toBe("shop.example.com: new certificate not deployed on 127.0.0.2");
    const two = describeEvent(recorded(type, { ...(data as Record<string, unknown>), lagging: ["127.0.0.2", "127.0.0.3"] }));
    expect(two.headline).toBe("shop.example.com: new certificate not deployed on 2 addresses");
    expect(two.summary).toContain("127.0.0.2, 127.0.0.3 still serve the old one");
  });
});

describe("certificate.renewal_blocked", () => {
  test("a wildcard blocked by issuewild: the record to add is an issuewild record, not an issue one", () => {
    // RFC 8659 §4.3: with an issuewild property in the set, issue is ignored for a wildcard; adding an
    // issue record would not unblock the renewal.
    const data = {
      certificate: certificate({ status: "valid", statusReason: null }),
      caa: { name: "*.example.com", setAt: "example.com", property: "issuewild", reason: "not_listed", records: ['0 issue "letsencrypt.org"', '0 issuewild "digicert.com"'], issuerDomain: "letsencrypt.org" },
    };
    const described = describeEvent(recorded("certificate.renewal_blocked", data));
    expect(fact(described, "Record to add")).toBe('example.com. CAA 0 issuewild "letsencrypt.org"');
    expect(described.summary).toContain('Add the record example.com. CAA 0 issuewild "letsencrypt.org"');
  });

  test("a critical unknown property: the fix is to remove it, not to add an issue record", () => {
    // RFC 8659 §4.1: a critical property of an unknown tag forbids every CA, whatever issue says.
    const data = {
      certificate: certificate({ status: "valid", statusReason: null }),
      caa: { name: "shop.example.com", setAt: "example.com", property: "issue", reason: "critical", records: ['0 issue "letsencrypt.org"', '128 tbs "unknown"'], issuerDomain: "letsencrypt.org" },
    };
    const described = describeEvent(recorded("certificate.renewal_blocked", data));
    expect(described.summary).toContain("A critical CAA property no CA understands forbids every CA: remove it from the records at example.com.");
    expect(described.summary).not.toContain("Add the record");
  });
});

describe("certificate.issued", () => {
  test("authorizedIssuer null (no allowed list) is not 'not an allowed issuer'; false is", () => {
    // CONTRACT §15: "authorizedIssuer is null when allowedIssuers is empty".
    const [type, data] = events().issued;
    const unlisted = describeEvent(recorded(type, { ...(data as Record<string, unknown>), authorizedIssuer: null }));
    expect(unlisted.headline).toBe("example.com: new certificate issued by Let's Encrypt");
    expect(unlisted.summary).not.toContain("not on this watch's allowed list");
    expect(fact(unlisted, "Allowed issuer")).toBeUndefined();
    const refused = describeEvent(recorded(type, { ...(data as Record<string, unknown>), authorizedIssuer: false }));
    expect(refused.headline).toBe("example.com: new certificate issued by Let's Encrypt (not an allowed issuer)");
    expect(fact(refused, "Allowed issuer")).toBe("no");
  });
});
