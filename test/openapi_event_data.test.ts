/**
 * The OpenAPI document's Event schema says what `data` each event kind adds (CONTRACT Part III: each
 * new event kind is accepted wherever its kind is, the OpenAPI document included), and its examples
 * of the `*_limit_reached` errors are the real messages, naming `org update` (§23).
 */
import { afterAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
afterAll(() => h?.close());

test("Event.data's description names what every event kind adds, renewal_overdue, renewal_requested and not_deployed included", async () => {
  h = await createHarness();
  const doc = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
  const description: string = doc.components.schemas.Event.properties.data.description;
  // As Part II's kinds are documented:
  expect(description).toContain("certificate.chain_expiring adds chainCertificate");
  expect(description).toContain("certificate.renewal_blocked adds caa");
  // Part III's other kinds:
  expect(description).toContain("certificate.renewal_overdue adds deadline, source (ari or lifetime), window: { start, end } | null and daysUntilExpiry");
  expect(description).toContain("certificate.renewal_requested adds window: { start, end } and explanationUrl");
  expect(description).toContain("certificate.not_deployed adds deployment: { issuedAt, fingerprintSha256, notAfter, issuer, seenAt, servedBy, endpoints } and lagging");
});

test("the examples of the *_limit_reached errors name org update, as the errors do", async () => {
  const doc = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
  const examples = new Map<string, string>();
  for (const path of Object.values(doc.paths) as any[]) {
    for (const operation of Object.values(path) as any[]) {
      for (const response of Object.values(operation.responses ?? {}) as any[]) {
        for (const example of Object.values(response.content?.["application/json"]?.examples ?? {}) as any[]) {
          const error = example.value?.error;
          if (error?.code?.endsWith("_limit_reached")) examples.set(error.code, error.message);
        }
      }
    }
  }
  expect([...examples.keys()].sort()).toEqual(["certificate_limit_reached", "channel_limit_reached", "watch_limit_reached"]);
  for (const [code, message] of examples) {
    const flag = code.replace("_reached", "").replace("_", "-");
    expect(message).toMatch(new RegExp(`^Your organization allows \\d+ \\w+ and all are in use: delete one, or have the operator raise the limit with: npm run certkeeper -- org update --id org_\\w+ --${flag} N\\.$`));
  }
});
