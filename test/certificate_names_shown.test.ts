/**
 * The names a server's certificate carries (its issuer's, its subject's, its chain's) are shown as
 * people see them, whatever the server wrote: on one line, control and reordering characters written
 * out, at most 256 characters. A hostile certificate may carry 90 KB in one name; a line break or
 * U+202E in it forged lines or reversed text in notifications, and its size got alerts refused.
 */
import { expect, test } from "bun:test";
import { describeChain, parseCertificates } from "../core/tls/mod.ts";
import { createLeaf } from "./support/pki.ts";
import { nameShown } from "../core/base/mod.ts";

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

test("every bidirectional mark is written out (the marks U+200E, U+200F, U+061C as the overrides), and a cut never splits an escape's character pair", () => {
  expect(nameShown("a\u200fb\u200ec\u061cd\u202ee")).toBe("a\\u200fb\\u200ec\\u061cd\\u202ee");
  const cut = nameShown(`${"x".repeat(250)}🔒🔒🔒🔒`, 256);
  expect(cut.length).toBeLessThanOrEqual(256);
  expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])/.test(cut)).toBe(false);
});
