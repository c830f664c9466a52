/**
 * CAA values are the monitored domain's DNS operator's to write (RFC 8659 §4.1.1 allows any octets in
 * a value), and certkeeper shows them "as zone files and dig show it" in `certificate.renewal_blocked`
 * (CONTRACT §22): printable ASCII as itself, `"` and `\` escaped, every other octet as `\DDD`
 * (RFC 1035 §5.1). A value holding a line break, a terminal escape or a bidi override forges no line in
 * a notification's text (Telegram's plain text, the email's text part).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import * as dnsPacket from "dns-packet";
import { TEST_DOMAIN, testPki } from "./support/harness.ts";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { answerTo, startFixtureDns } from "./support/dns_servers.ts";
import { addAndGet, dnsWorld, eventsOf } from "./support/dns_world.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { telegramPayload } from "../core/notify/telegram_payload.ts";
import { emailMessage } from "../core/notify/email_message.ts";
import { presentCaaRecord } from "../core/dns/caa.ts";

setDefaultTimeout(30_000);

const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.reverse()) await close();
});

const FORGED = "other-ca.example\n\nStatus:        valid\nAll good: no action needed.\u001b[2J\u202e";
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

/** A TLS server for `domain`, a DNS server answering each question as `answer` says, and the certificate added and checked through them. */
async function checkedBehind(domain: string, answer: (question: dnsPacket.Question) => dnsPacket.Answer[]) {
  const { rsaIntermediate } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [domain] });
  const server: TlsTestServer = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  closers.push(() => server.close());
  const fixture = await startFixtureDns((query) => ({ message: answerTo(query, answer(query.questions![0]!)) }));
  closers.push(() => fixture.close());
  const w = await dnsWorld(fixture.port);
  closers.push(() => w.close());
  return { w, cert: await addAndGet(w.h, { domain, port: server.port }) };
}

describe("CAA records with line breaks and escapes in certificate.renewal_blocked", () => {
  test("the record shown for a hostile value is one line of printable text", () => {
    const shown = presentCaaRecord({ flags: 0, tag: "issue", value: FORGED });
    expect(shown).toStartWith('0 issue "other-ca.example');
    expect(shown).not.toMatch(CONTROLS);
    // As dig shows it: quotes and backslashes escaped, any other octet but printable ASCII as \DDD.
    expect(presentCaaRecord({ flags: 128, tag: "issue", value: 'ca.example; a="b\\c"\n€' })).toBe('128 issue "ca.example; a=\\"b\\\\c\\"\\010\\226\\130\\172"');
  });

  test("a check against DNS that serves it: the event's records, and the Telegram and email text made of them, forge no line", async () => {
    const domain = `caa-forged.${TEST_DOMAIN}`;
    const { w, cert } = await checkedBehind(domain, (q) =>
      q.type === "CAA" && q.name === domain ? [{ type: "CAA", name: domain, ttl: 60, data: { flags: 0, tag: "issue", value: FORGED } }] : [],
    );
    // The records forbid the test CA: warned and announced.
    expect(cert.warnings).toContain("caa_forbids_issuer");
    const events = await eventsOf(w.h, cert.id);
    const blocked = events.find((e) => e.type === "certificate.renewal_blocked");
    expect(blocked).toBeDefined();
    const records: string[] = blocked.data.caa.records;
    expect(records.length).toBe(1);
    expect(records[0]).not.toMatch(CONTROLS);

    const record = { ...blocked, createdAt: Date.parse(blocked.createdAt) };
    const described = describeEvent(record);
    const telegram = telegramPayload(record, described, 1).text.split("\n");
    // One status line, the certificate's own (valid: CAA forbids the next renewal, not this certificate).
    expect(telegram.filter((line) => line.startsWith("Status:"))).toEqual(["Status: valid"]);
    expect(telegram.filter((line) => line.startsWith("All good"))).toEqual([]);
    const email = emailMessage(record, { id: "ch_1" } as never, { described, to: "ops@example.com", mailFrom: "certkeeper@localhost" }).text.split("\n");
    expect(email.filter((line) => line.startsWith("All good"))).toEqual([]);
  });

  test("a CNAME whose target is no host name (a line break in a label) is not followed: no verdict, nothing shown forges a line", async () => {
    const domain = `caa-alias.${TEST_DOMAIN}`;
    const target = "ops\nall clear, nothing to do.example";
    const caa: dnsPacket.Answer = { type: "CAA", name: target, ttl: 60, data: { flags: 0, tag: "issue", value: "other-ca.example" } };
    const alias: dnsPacket.Answer = { type: "CNAME", name: domain, ttl: 60, data: target };
    const { w, cert } = await checkedBehind(domain, (q) =>
      q.name === domain && (q.type === "CAA" || q.type === "CNAME") ? [alias, ...(q.type === "CAA" ? [caa] : [])] : q.name === target && q.type === "CAA" ? [caa] : [],
    );
    // The alias leads to no host name: the lookup fails (as a DNS error, no verdict), and nothing shown
    // holds the target's line break.
    expect(cert.status).toBe("valid");
    expect(cert.warnings).not.toContain("caa_forbids_issuer");
    expect((await eventsOf(w.h, cert.id)).map((e) => e.type)).not.toContain("certificate.renewal_blocked");
    expect(JSON.stringify(cert)).not.toMatch(CONTROLS);
    expect(JSON.stringify(cert)).not.toContain("\\nall clear");
  });
});
