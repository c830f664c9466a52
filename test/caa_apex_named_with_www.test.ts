/**
 * docs/dns.md: "checked under www.example.com, the same certificate has its apex judged beside the
 * wildcard, by the base's `issue` records": also when the certificate names www itself (example.com,
 * www.example.com, *.example.com: common with certbot `-d example.com -d www.example.com -d
 * '*.example.com'`), whose renewal asks for the apex either way.
 */
import { expect, test } from "bun:test";
import { judgeCaa, type CaaSet } from "../core/dns/mod.ts";

const identities = [{ name: "Test CA", domain: "ca.example.net" }];
// The apex's set: the CA may issue wildcards (issuewild) but not the apex itself (issue names another).
const apexSet: CaaSet = {
  from: "example.com",
  setAt: "example.com",
  records: [
    { flags: 0, tag: "issue", value: "other-ca.example.org" },
    { flags: 0, tag: "issuewild", value: "ca.example.net" },
  ],
};
// www has a set of its own that allows the CA.
const wwwSet: CaaSet = { from: "www.example.com", setAt: "www.example.com", records: [{ flags: 0, tag: "issue", value: "ca.example.net" }] };
const sets = new Map([
  ["example.com", apexSet],
  ["www.example.com", wwwSet],
]);

test("apex + wildcard, checked under www: the apex is forbidden", () => {
  const verdict = judgeCaa({ domain: "www.example.com", subjectAlternativeNames: ["example.com", "*.example.com"], issuerNames: ["Test CA"], identities, sets });
  expect(verdict.status).toBe("forbidden");
  expect(verdict.blocking?.name).toBe("example.com");
});

test("apex + www + wildcard, checked under www: the apex the renewal asks for is judged too", () => {
  const verdict = judgeCaa({
    domain: "www.example.com",
    subjectAlternativeNames: ["example.com", "www.example.com", "*.example.com"],
    issuerNames: ["Test CA"],
    identities,
    sets,
  });
  expect(verdict.status).toBe("forbidden");
  expect(verdict.blocking?.name).toBe("example.com");
});
