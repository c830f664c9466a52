/**
 * The names a server's certificate carries (its issuer's, its subject's, its chain's) are shown as
 * people see them, whatever the server wrote: on one line, control and reordering characters written
 * out, at most 256 characters. A hostile certificate may carry 90 KB in one name; a line break or
 * U+202E in it forged lines or reversed text in notifications, and its size got alerts refused.
 */
import { expect, test } from "bun:test";
import { describeChain, parseCertificates } from "../core/tls/mod.ts";
import { createLeaf } from "./support/pki.ts";

test("a self-signed leaf whose organization holds a bidi override and 5,000 characters is described within 256 characters, on one line", async () => {
  const hostile = `Evil\u202eAC${"x".repeat(5000)}`;
  const leaf = await createLeaf({ subject: `CN=names.example, O=${hostile}`, dnsNames: ["names.example"] });
  const details = describeChain(parseCertificates([new Uint8Array(leaf.cert.rawData)]));
  for (const name of [details.issuer, details.chain[0]!.subject, details.chain[0]!.issuer]) {
    expect(name.length).toBeLessThanOrEqual(256);
    expect(name).not.toMatch(/[\u0000-\u001f\u202a-\u202e]/);
  }
  expect(details.issuer).toStartWith("Evil\\u202eAC");
  expect(details.issuer).toEndWith("…");
  expect(details.subject).toBe("names.example");
});
