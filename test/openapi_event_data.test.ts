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

test("each kind's data has its shape in the document: a renewal_overdue without its deadline, an issued event with a numeric issuer, a test event without its channel are refused", async () => {
  const doc = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
  const { openApiCheckerFor } = await import("./support/openapi_check.ts");
  const checker = openApiCheckerFor(JSON.stringify(doc));
  const kinds: string[] = doc.components.schemas.Event.properties.type.enum;
  const shaped = doc.components.schemas.Event.allOf.map((rule: any) => rule.if.properties.type.const);
  expect([...shaped].sort()).toEqual([...kinds].sort());

  const certificate = { id: "crt_1", domain: "example.com" };
  const listing = (event: Record<string, unknown>) => ({
    method: "GET",
    path: "/v1/events",
    status: 200,
    headers: new Headers({ "content-type": "application/json; charset=utf-8", "x-request-id": "req_1", "x-ratelimit-limit": "60", "x-ratelimit-remaining": "59", "x-ratelimit-reset": "1" }),
    body: { data: [{ id: "evt_1", createdAt: "2026-11-30T00:00:00.000Z", certificateId: "crt_1", deliveries: [], ...event }], meta: { requestId: "req_1", nextCursor: null } },
  });
  const overdue = { deadline: "2026-11-30T00:00:00.000Z", source: "lifetime", window: null, daysUntilExpiry: 3, certificate };
  const bodyProblems = (event: Record<string, unknown>) => checker.problems(listing(event)).filter((problem) => !/header/i.test(problem));
  expect(bodyProblems({ type: "certificate.renewal_overdue", data: overdue })).toEqual([]);
  expect(bodyProblems({ type: "certificate.renewal_overdue", data: { ...overdue, deadline: undefined } }).join(" ")).toContain("deadline");
  expect(bodyProblems({ type: "certificate.renewal_overdue", data: { ...overdue, source: "guess" } })).not.toEqual([]);
  const issued = { watchId: "wat_1", domain: "example.com", dnsNames: ["example.com"], issuer: "R10", notBefore: "2026-11-30T00:00:00.000Z", notAfter: "2027-01-30T00:00:00.000Z", fingerprintSha256: null, authorizedIssuer: null };
  expect(bodyProblems({ type: "certificate.issued", certificateId: null, data: issued })).toEqual([]);
  expect(bodyProblems({ type: "certificate.issued", certificateId: null, data: { ...issued, issuer: 10 } })).not.toEqual([]);
  expect(bodyProblems({ type: "test", certificateId: null, data: { message: "hello" } }).join(" ")).toContain("channel");
  // A request whose answer's window was not kept (the CA no longer publishes renewalInfo) has window null.
  const requested = { window: null, explanationUrl: null, certificate };
  expect(bodyProblems({ type: "certificate.renewal_requested", data: requested })).toEqual([]);
  expect(bodyProblems({ type: "certificate.renewal_requested", data: { ...requested, window: "soon" } })).not.toEqual([]);
  // A kind's shape does not judge another kind's data: an expiring event has no deadline.
  expect(bodyProblems({ type: "certificate.expiring", data: { threshold: 7, certificate } })).toEqual([]);
});
