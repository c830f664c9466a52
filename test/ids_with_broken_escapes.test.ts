/**
 * An id in a path with a broken %-escape (`%E0%A4%A`, `%ZZ`), or one that decodes to a string holding
 * U+0000 (`%00`), names no resource: the operation answers its own not-found (CONTRACT §4), naming the
 * id as the URL spells it, like any unknown id. (The router cannot decode the first; the second is no
 * field of a body to refuse.)
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, expectError, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(() => h.close());

test.each([
  ["GET", "/v1/certificates/%E0%A4%A", "certificate_not_found"],
  ["POST", "/v1/certificates/%E0%A4%A/check", "certificate_not_found"],
  ["DELETE", "/v1/channels/%E0%A4%A", "channel_not_found"],
  ["GET", "/v1/watches/%ZZ", "watch_not_found"],
  ["GET", "/v1/imports/%", "import_not_found"],
  ["GET", "/v1/certificates/%00", "certificate_not_found"],
  ["GET", "/v1/certificates/cert_%00abcdefghijklmnop", "certificate_not_found"],
  ["POST", "/v1/certificates/%00/check", "certificate_not_found"],
  ["DELETE", "/v1/channels/%00", "channel_not_found"],
  ["GET", "/v1/watches/%00", "watch_not_found"],
])("%s %s: 404 %s naming the id as written", async (method, path, code) => {
  const response = await h.request(method, path);
  expectError(response, 404, code);
  expect(response.body.error.message).toContain(`"${path.split("/")[3]}"`);
});

test("over HTTP, where the server's own router reads the path, a broken escape is named as written too (not as U+FFFD)", async () => {
  h.app.listen({ port: 0, hostname: "127.0.0.1" });
  try {
    const base = `http://127.0.0.1:${h.app.server!.port}`;
    const seen: Array<[number, string]> = [];
    for (const id of ["abc%ZZdef", "%E0%A4%A", "ab%C3%A9", "%EF%BF%BD"]) {
      const response = await fetch(`${base}/v1/certificates/${id}`, { headers: { authorization: `Bearer ${h.keys.owner.key}` } });
      seen.push([response.status, (await response.json()).error.message.split(":")[0]]);
    }
    expect(seen).toEqual([
      [404, 'No certificate with id "abc%ZZdef"'],
      [404, 'No certificate with id "%E0%A4%A"'],
      // Escapes that decode are read decoded, U+FFFD itself included.
      [404, 'No certificate with id "abé"'],
      [404, 'No certificate with id "\uFFFD"'],
    ]);
  } finally {
    await h.app.stop();
  }
});
