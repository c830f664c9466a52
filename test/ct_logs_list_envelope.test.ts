/**
 * GET /v1/ct/logs (CONTRACT §21, Part III) answers a list, `[{ url, kind, treeSize, position,
 * lastError, updatedAt }]`. CONTRACT §4: "Success: `{ "data": …, "meta": { "requestId": "req_…" } }`;
 * lists add `meta.nextCursor` (string, or null on the last page)." Every other list of the API
 * (certificates, channels, events, watches) carries it, and the served OpenAPI document requires it
 * there: so does this one (null: the logs are one page).
 */
import { afterAll, expect, test } from "bun:test";
import { createHarness, expectData, type Harness } from "./support/harness.ts";

let h: Harness;
afterAll(() => h?.close());

test("GET /v1/ct/logs is a list: its meta carries nextCursor (null on the last page), as every list's does", async () => {
  h = await createHarness({ config: { ctSource: "logs" } });
  const response = await h.request("GET", "/v1/ct/logs", { key: h.keys.admin.key });
  const data = expectData(response, 200);
  expect(Array.isArray(data)).toBe(true);
  // CONTRACT §4: "lists add `meta.nextCursor` (string, or null on the last page)".
  expect(response.body.meta).toEqual({ requestId: expect.stringMatching(/^req_/), nextCursor: null });
});

test("the served OpenAPI document requires meta.nextCursor on GET /v1/ct/logs, as on the other lists", async () => {
  h ??= await createHarness();
  const doc = (await h.request("GET", "/v1/openapi.json", { key: null })).body;
  const metaOf = (path: string) => doc.paths[path].get.responses["200"].content["application/json"].schema.properties.meta;
  // The other lists, for comparison: each requires it.
  for (const path of ["/v1/certificates", "/v1/channels", "/v1/events", "/v1/watches"]) {
    expect({ path, required: metaOf(path).required }).toEqual({ path, required: ["requestId", "nextCursor"] });
  }
  // CONTRACT §4: "lists add `meta.nextCursor`".
  expect(metaOf("/v1/ct/logs").required).toEqual(["requestId", "nextCursor"]);
});
