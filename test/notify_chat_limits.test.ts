/**
 * Discord's and Slack's documented limits, reached with what a hostile certificate or CA can put in an
 * event (names and values up to 1,024 characters each): a message over a limit is refused on every
 * retry, so the alert is lost. And a cut never leaves half an escape.
 */
import { describe, expect, test } from "bun:test";
import { renderNotification } from "../core/notify/payloads.ts";
import { certificateView, channelOf, eventOf } from "./support/notify_events.ts";

const OPTIONS = { now: Date.parse("2026-05-05T09:30:00.000Z"), mailFrom: "certkeeper@alerts.example" };
const LONG = (ch: string) => ch.repeat(1024);

function discord(event: ReturnType<typeof eventOf>) {
  const n = renderNotification(event, channelOf("discord", { webhookUrl: "https://discord.com/api/webhooks/1/x" }), OPTIONS);
  if (n.kind !== "http") throw new Error("expected an HTTP request");
  return JSON.parse(n.request.body) as {
    content: string;
    embeds: Array<{ title: string; description: string; fields: Array<{ name: string; value: string; inline: boolean }>; footer: { text: string } }>;
  };
}

function slack(event: ReturnType<typeof eventOf>) {
  const n = renderNotification(event, channelOf("slack", { webhookUrl: "https://hooks.slack.com/services/T/B/x" }), OPTIONS);
  if (n.kind !== "http") throw new Error("expected an HTTP request");
  return JSON.parse(n.request.body) as { text: string; blocks: Array<{ type: string; text?: { text: string }; fields?: Array<{ text: string }> }> };
}

/** An overdue renewal about another address's leaf, every free-text value at its 1,024 characters. */
function overdueEverythingLong() {
  return eventOf("certificate.renewal_overdue", {
    certificate: certificateView({ name: LONG("n"), serialNumber: LONG("s"), status: "expiring", statusReason: null }),
    deadline: LONG("d"),
    source: "lifetime",
    window: { start: LONG("w"), end: LONG("v") },
    endpoint: { address: LONG("a"), serialNumber: LONG("e"), expiresAt: LONG("x") },
  });
}

describe("Discord's limits", () => {
  test("content is at most 2,000 characters, the cut marked", () => {
    const body = discord(overdueEverythingLong());
    expect(body.content.length).toBeLessThanOrEqual(2000);
    expect(body.content.length).toBeGreaterThan(1900);
    expect(body.content.endsWith("…")).toBe(true);
  });

  test("an embed's text in all is at most 6,000 characters, and the description keeps at least 256", () => {
    const [embed] = discord(overdueEverythingLong()).embeds;
    const total =
      embed!.title.length + embed!.description.length + embed!.footer.text.length + embed!.fields.reduce((sum, f) => sum + f.name.length + f.value.length, 0);
    expect(total).toBeLessThanOrEqual(6000);
    expect(embed!.description.length).toBeGreaterThanOrEqual(256);
    for (const field of embed!.fields) expect(field.value.length).toBeLessThanOrEqual(1024);
  });

  test("a field's value is at most 1,024 characters (a renewal window of two long dates)", () => {
    const event = eventOf("certificate.renewal_requested", {
      certificate: certificateView({ status: "expiring", statusReason: null }),
      window: { start: LONG("w"), end: LONG("v") },
    });
    const field = discord(event).embeds[0]!.fields.find((f) => f.name === "Renewal window")!;
    expect(field.value.length).toBeLessThanOrEqual(1024);
    expect(field.value.length).toBeGreaterThan(1000);
    expect(field.value.endsWith("…")).toBe(true);
  });

  test("the description is at most 4,096 characters even when the fields leave room for more", () => {
    const lagging = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(1000, "l"));
    const event = eventOf("certificate.not_deployed", {
      certificate: certificateView({ status: "valid", statusReason: null }),
      deployment: { issuedAt: "2026-05-01T00:00:00.000Z" },
      lagging,
    });
    const description = discord(event).embeds[0]!.description;
    expect(description.length).toBeLessThanOrEqual(4096);
    expect(description.length).toBeGreaterThan(4000);
  });

  test("a fact of 40 characters is an inline field, one of 41 is not", () => {
    const serial = (length: number) =>
      discord(eventOf("certificate.invalid", { certificate: certificateView({ serialNumber: "A".repeat(length) }) })).embeds[0]!.fields.find(
        (f) => f.name === "Serial number",
      )!;
    expect(serial(40).inline).toBe(true);
    expect(serial(41).inline).toBe(false);
  });

  test("a heading, quote or list marker at the start of a value from the certificate is escaped", () => {
    for (const issuer of ["- not a list", "# not a heading", "> not a quote"]) {
      const field = discord(eventOf("certificate.invalid", { certificate: certificateView({ issuer }) })).embeds[0]!.fields.find((f) => f.name === "Issuer")!;
      expect(field.value).toBe(`\\${issuer}`);
    }
  });
});

describe("Slack's limits", () => {
  test("a section holds at most 10 fields: twelve facts take two sections, all of them shown", () => {
    const { blocks } = slack(overdueEverythingLong());
    const sections = blocks.filter((b) => b.fields !== undefined);
    expect(sections.length).toBe(2);
    for (const section of sections) expect(section.fields!.length).toBeLessThanOrEqual(10);
    expect(sections.reduce((sum, s) => sum + s.fields!.length, 0)).toBe(12);
  });

  test("a field's text is at most 2,000 characters, and its cut leaves no half-written &amp;", () => {
    // "ab" then 1,022 ampersands: escaped, 5,110 characters of "&amp;", cut where "&amp" would be left.
    const event = eventOf("certificate.unreachable", {
      certificate: certificateView({ status: "unreachable", statusReason: "timeout" }),
      error: `ab${"&".repeat(1022)}`,
    });
    const field = slack(event).blocks.flatMap((b) => b.fields ?? []).find((f) => f.text.startsWith("*Error*"))!;
    expect(field.text.length).toBeLessThanOrEqual(2000);
    expect(field.text.length).toBeGreaterThan(1990);
    expect(field.text.endsWith("…")).toBe(true);
    // Before the ellipsis: whole entities only.
    expect(field.text.slice(0, -1)).toMatch(/&amp;$/);
  });
});
