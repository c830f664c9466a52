/**
 * An internationalized name written with two trailing dots is refused (CONTRACT §5 removes "one
 * trailing dot") for what it is, an empty label, as the same name in ASCII is: not for "full-width
 * letters, invisible characters, other dots" it does not hold.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHarness, type Harness } from "./support/harness.ts";

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
});
afterAll(async () => {
  await h.close();
});

test("bücher.example.. is refused for its empty label, as its A-label spelling is", async () => {
  const messages: Record<string, string> = {};
  for (const domain of ["xn--bcher-kva.example..", "bücher.example.."]) {
    const response = await h.request("POST", "/v1/certificates", { body: { domain } });
    expect([domain, response.status, (response.body as any).error.code]).toEqual([domain, 400, "invalid_domain"]);
    messages[domain] = (response.body as any).error.message;
  }
  expect(messages["xn--bcher-kva.example.."]).toContain("empty label");
  expect(messages["bücher.example.."]).toContain("empty label");
  expect(messages["bücher.example.."]).not.toContain("full-width");
});
