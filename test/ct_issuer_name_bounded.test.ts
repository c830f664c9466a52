/**
 * A logged certificate's issuer O (or CN) is the CA's to write, of any length (CONTRACT §21): the
 * follower keeps at most 256 characters of it for `certificate.issued`'s `issuer`. An entry with a huge
 * issuer name makes no notification too large for its channel: PagerDuty's Events API refuses an event
 * over 512 KB (and the summary repeats the issuer), and the email subject is the headline.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { issueThroughCt } from "./support/ct_certs.ts";
import { createIntermediateCa } from "./support/pki.ts";
import { testPki } from "./support/harness.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { pagerdutyRequests } from "../core/notify/pagerduty_payload.ts";

setDefaultTimeout(60_000);

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const PAGERDUTY_EVENT_MAX = 512 * 1024;

describe("a logged certificate with a huge issuer name", () => {
  test("the certificate.issued PagerDuty event stays within PagerDuty's 512 KB, and the email subject within reason", async () => {
    world = await startCtWorld({ logs: [{ kind: "tiled" }] });
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "huge-issuer.example" });
    const { root } = await testPki();
    const hostileCa = await createIntermediateCa(root, { name: `CN=E9, O=${"A".repeat(350_000)}, C=US` });
    await issueThroughCt({ issuer: hostileCa, dnsNames: ["huge-issuer.example"], logs: w.logs, above: [Buffer.from(root.cert.rawData)] });
    w.publishAll();
    const [event] = await w.until("the event", async () => {
      const events = await w.issued();
      return events.length > 0 ? events : null;
    });
    expect(event.data.dnsNames).toEqual(["huge-issuer.example"]);

    const record = { ...event, createdAt: Date.parse(event.createdAt) };
    const described = describeEvent(record);
    const requests = pagerdutyRequests(record, described, { baseUrl: "https://events.pagerduty.com", routingKey: "R".repeat(32) });
    expect(requests.length).toBe(1);
    expect(Buffer.byteLength(requests[0]!.body)).toBeLessThanOrEqual(PAGERDUTY_EVENT_MAX);
    // The email subject is the headline: an RFC 5322 line is at most 998 characters, folded or not a subject is not a page.
    expect(described.headline.length).toBeLessThanOrEqual(998);
  });
});
