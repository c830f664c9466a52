/**
 * A logged certificate's SAN dNSNames are whatever octets its IA5Strings hold, and a search service
 * passes on what it read. Only DNS names (labels of letters, digits, hyphens and underscores, the first
 * possibly `*`) are kept as an issuance's names (CONTRACT §15, §21): a name holding a line break, a
 * terminal escape or a bidi override is dropped, so it forges no line in `certificate.issued`'s
 * notifications (Telegram's plain text, the email's text part). An issuer's name is shown with what
 * would act on a terminal written out.
 */
import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startCtWorld, type CtWorld } from "./support/ct_world.ts";
import { describeEvent } from "../core/notify/_describe.ts";
import { telegramPayload } from "../core/notify/telegram_payload.ts";
import { emailMessage } from "../core/notify/email_message.ts";
import { readIssuance } from "../core/watches/mod.ts";

setDefaultTimeout(30_000);

let world: CtWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("a logged certificate whose other names hold line breaks and escapes", () => {
  test("certificate.issued's names, and the Telegram and email text made of them, forge no line", async () => {
    world = await startCtWorld();
    const w = world;
    await w.caughtUp(0);
    await w.addWatch({ domain: "watched.example", includeSubdomains: true });
    await w.issue({
      dnsNames: ["www.watched.example", "x.example\n\nallowed issuer: yes\nall clear, nothing to do\u001b]52;c;ZWNobyBvd25lZA==\u0007.example"],
      subject: "CN=www.watched.example",
    });
    w.publishAll();
    const [event] = await w.until("the event", async () => {
      const events = await w.issued();
      return events.length > 0 ? events : null;
    });
    // The issuance was seen and announced for its watched name.
    expect(event.data.dnsNames).toContain("www.watched.example");
    for (const name of event.data.dnsNames as string[]) expect(name).not.toMatch(CONTROLS);

    const record = { ...event, createdAt: Date.parse(event.createdAt) };
    const described = describeEvent(record);
    const telegram = telegramPayload(record, described, 1).text.split("\n");
    expect(telegram.filter((line) => line.startsWith("all clear"))).toEqual([]);
    const email = emailMessage(record, { id: "ch_1" } as never, { described, to: "ops@example.com", mailFrom: "certkeeper@localhost" }).text.split("\n");
    expect(email.filter((line) => line.startsWith("all clear"))).toEqual([]);
  });

  test("from a search service: such names are dropped, and the issuer's name is shown with its escapes written out", () => {
    const issuance = readIssuance({
      id: "1",
      not_before: "2026-11-01T00:00:00Z",
      not_after: "2027-01-30T00:00:00Z",
      dns_names: ["WWW.Watched.Example", "x.example\nall clear", "*.watched.example", "a b.example", "\u202eevil.example"],
      issuer: { friendly_name: "Evil CA\u001b[2J", name: "C=US, O=Evil\nCA, CN=E1" },
    })!;
    expect(issuance.dnsNames).toEqual(["www.watched.example", "*.watched.example"]);
    expect(issuance.issuerFriendlyName).toBe("Evil CA\\x1b[2J");
    expect(issuance.issuerName).not.toMatch(CONTROLS);
  });

  test("from a search service: an absolute name (its trailing dot) is the name, as the logs source reads it", () => {
    const issuance = readIssuance({ id: "2", not_before: "2026-11-01T00:00:00Z", not_after: "2027-01-30T00:00:00Z", dns_names: ["WWW.Watched.Example.", "watched.example", "."] })!;
    expect(issuance.dnsNames).toEqual(["www.watched.example", "watched.example"]);
  });
});
