/**
 * Review (CONTRACT Part III intro: each new event kind "is accepted wherever its kind is (... the
 * OpenAPI document ...)"). The Event schema's `data` documents what each Part I/II kind adds
 * (threshold, chainCertificate, endpoint, previous; renewal_blocked's caa), but not what
 * certificate.renewal_overdue (§18: deadline, source, window, daysUntilExpiry), certificate.renewal_requested
 * (§19: window, explanationUrl) or certificate.not_deployed (§20: deployment, lagging) carry.
 */
import { afterAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
afterAll(() => h?.close());

test("the OpenAPI Event.data description names the data of every Part III event kind", async () => {
  h = await createHarness();
  const doc = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
  const description: string = doc.components.schemas.Event.properties.data.description;
  // As Part II's kinds are documented:
  expect(description).toContain("certificate.chain_expiring adds chainCertificate");
  expect(description).toContain("certificate.renewal_blocked adds caa");
  // Part III's other kinds:
  expect(description).toContain("certificate.renewal_overdue");
  expect(description).toContain("deadline");
  expect(description).toContain("certificate.renewal_requested");
  expect(description).toContain("explanationUrl");
  expect(description).toContain("certificate.not_deployed");
  expect(description).toContain("lagging");
});
