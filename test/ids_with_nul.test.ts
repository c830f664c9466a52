/**
 * An id in a path that decodes to a string holding U+0000 names no resource, like any other unknown id
 * (CONTRACT §4: the operation's 404, certificate_not_found, channel_not_found, …), as an id with a
 * broken %-escape does: never a 400 calling the path's id a field.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test.each([
  ["GET", "/v1/certificates/%00", "certificate_not_found"],
  ["GET", "/v1/certificates/cert_%00abcdefghijklmnop", "certificate_not_found"],
  ["POST", "/v1/certificates/%00/check", "certificate_not_found"],
  ["DELETE", "/v1/channels/%00", "channel_not_found"],
  ["GET", "/v1/watches/%00", "watch_not_found"],
])("%s %s: 404 %s, as for any unknown id", async (method, path, code) => {
  expectError(await h.request(method, path), 404, code);
});
