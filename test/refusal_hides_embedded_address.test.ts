/**
 * IPv6 forms that embed an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64 64:ff9b::/96, 6to4 2002::/16)
 * are refused by the kind of address they carry, never the address (docs/api.md: "a refused target is
 * reported by the kind of address it resolves to ("a private address"), never the address, so callers
 * cannot map the server's network"): the refusal named `(embedded in ::ffff:10.20.30.40)`, the internal
 * address a host name resolved to, to whoever created a webhook channel or added a certificate for it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHarness, TEST_DOMAIN, type Harness } from "./support/harness.ts";
import { parseResolveRules } from "../core/config/resolve_rules.ts";

const SECRET_V4 = "10.20.30.40";
const FORMS: Record<string, string> = {
  mapped: "::ffff:10.20.30.40",
  nat64: "64:ff9b::a14:1e28",
  sixtofour: "2002:a14:1e28::1",
  plain: SECRET_V4,
};
let h: Harness;

beforeAll(async () => {
  h = await createHarness({
    config: {
      allowPrivateTargets: false,
      dnsServers: "off",
      resolve: parseResolveRules(Object.entries(FORMS).map(([label, address]) => `${label}.${TEST_DOMAIN}=${address}`).join(",")),
    },
  });
});
afterAll(() => h.close());

/** Whether `text` gives away the address: its IPv4 form, or the IPv6 form that encodes it. */
function reveals(text: string, label: string): boolean {
  return text.includes(SECRET_V4) || text.toLowerCase().includes(FORMS[label]!.toLowerCase()) || /a14:1e28/i.test(text);
}

describe("a refused name is reported by the kind of address, never the address (IPv6 forms embedding IPv4)", () => {
  test.each(Object.keys(FORMS))("webhook channel for a name resolving to the %s form", async (label) => {
    const response = await h.request("POST", "/v1/channels", { body: { type: "webhook", name: `Hook ${label}`, config: { url: `https://${label}.${TEST_DOMAIN}/hook` } } });
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe("invalid_webhook_url");
    const message: string = response.body.error.message;
    expect(message).toContain("private address");
    expect({ message, reveals: reveals(message, label) }).toEqual({ message, reveals: false });
  });

  test.each(Object.keys(FORMS))("certificate add for a name resolving to the %s form (422, nothing stored)", async (label) => {
    const response = await h.request("POST", "/v1/certificates", { body: { domain: `${label}.${TEST_DOMAIN}` } });
    expect(response.status).toBe(422);
    const message: string = response.body.error.message;
    expect(message).toContain("private address");
    expect({ message, reveals: reveals(message, label) }).toEqual({ message, reveals: false });
  });
});
