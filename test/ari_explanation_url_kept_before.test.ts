/**
 * A CA's ARI `explanationURL` is kept parsed (its href, one line) from the moment it is read. An answer
 * kept before that (the CA's text as written, line breaks and escapes included) stays in the shared
 * cache until the leaf is next asked about, up to its Retry-After: whatever such an answer says is shown
 * as a URL too, in the certificate's `renewal` and in `certificate.renewal_requested`'s data, never as
 * the CA wrote it (the notification's text: ari_explanation_url_shown.test.ts).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { DAY, HOUR, SECOND } from "../core/base/mod.ts";
import { expectData, TEST_DOMAIN } from "./support/harness.ts";
import { certIdOf } from "./support/ari_server.ts";
import { ariWorlds } from "./support/ari_world.ts";

setDefaultTimeout(30_000);

const { world, served } = ariWorlds();

const HOSTILE = "https://ca.example/incident\n01:02:03 INFO  certkeeper: all certificates valid\r\n\u001b]0;owned\u0007\u202eevil";
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("an ARI answer kept with the CA's explanation text as written", () => {
  test("is shown as a URL: the certificate's renewal and the event's data", async () => {
    const w = await world();
    const now = Math.floor(Date.now() / SECOND) * SECOND;
    const domain = `ari-kept-before.${TEST_DOMAIN}`;
    const notAfter = now + 80 * DAY;
    const { leaf, server } = await served(domain, { notBefore: now - 10 * DAY, notAfter });
    // The CA's request for early replacement, as the previous release kept it: fresh for six hours more.
    const end = now - HOUR;
    await w.h.store.renewalInfo.put(
      certIdOf(leaf),
      { window: { start: end - HOUR, end }, explanationUrl: HOSTILE, checkedAt: now - HOUR, requestedEnd: end, nextAt: now + 6 * HOUR, lastError: null },
      notAfter,
      now - HOUR,
    );

    const added = expectData(await w.h.request("POST", "/v1/certificates", { body: { domain, port: server.port } }), 201);
    const got = expectData(await w.h.request("GET", `/v1/certificates/${added.id}`), 200);
    // The kept answer was used (no request to the CA yet): the request for early replacement stands.
    expect({ source: got.renewal.source, end: got.renewal.window?.end }).toEqual({ source: "ari", end: new Date(end).toISOString() });
    expect(got.renewal.explanationUrl).toStartWith("https://ca.example/incident");
    expect(got.renewal.explanationUrl).not.toMatch(CONTROLS);

    const events = expectData(await w.h.request("GET", "/v1/events?limit=100"), 200) as any[];
    const requested = events.find((e) => e.certificateId === added.id && e.type === "certificate.renewal_requested");
    expect(requested).toBeDefined();
    expect(requested.data.explanationUrl).toStartWith("https://ca.example/incident");
    expect(requested.data.explanationUrl).not.toMatch(CONTROLS);
  });
});
