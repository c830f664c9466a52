/**
 * The Channels and Watches tabs as an operator reads them (CONTRACT §15, §16, §23): each channel's
 * state and the button that flips it, where it sends (a Telegram chat included), its filter in words,
 * how its deliveries go (why they fail, whether they are retried); a secret's hint on the edit form;
 * each watch's subdomains, issuances seen and last error. In-process, over HTTP.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { quickPasswords } from "./support/passwords.ts";
import { createHarness, type Harness } from "./support/harness.ts";
import { channelRecord } from "./support/store_conformance/factories.ts";
import { signedInUser, type WebUser } from "./support/web_users.ts";
import { newId } from "../core/base/mod.ts";

const HOUR = 3_600_000;
let h: Harness;

beforeAll(async () => {
  h = await createHarness({ passwords: quickPasswords, limits: { requestsPerMinute: 100_000, channels: 100, watches: 100 } });
});
afterAll(async () => {
  await h?.close();
});

async function newOrganization() {
  const org = await h.core.services.admin.createOrganization({ name: `Org ${crypto.randomUUID().slice(0, 6)}`, plan: "enterprise", limits: { channels: 100, watches: 100, requestsPerMinute: 100_000 } });
  const user: WebUser = await signedInUser(h, "owner", org.id);
  return { user, scope: { organizationId: org.id, mode: "live" as const } };
}

/** The `<tr>` of one channel. */
function row(page: string, id: string): string {
  const match = new RegExp(`<tr data-channel-id="${id}">[\\s\\S]*?</tr>`).exec(page);
  if (!match) throw new Error(`no row for ${id}`);
  return match[0];
}

function cell(rowHtml: string, label: string): string {
  const match = new RegExp(`<td data-label="${label}"[^>]*>([\\s\\S]*?)</td>`).exec(rowHtml);
  if (!match) throw new Error(`no ${label} cell`);
  return match[1]!.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim();
}

describe("the Channels tab", () => {
  test("a disabled channel reads disabled and offers Enable; an enabled one reads enabled and offers Disable", async () => {
    const { user, scope } = await newOrganization();
    const on = channelRecord(scope, { name: "On hook", enabled: true });
    const off = channelRecord(scope, { name: "Off hook", enabled: false });
    for (const c of [on, off]) expect(await h.store.channels.insert(c, { limit: 100 })).toBe(true);
    const page = (await user.browser.get("/channels?mode=live")).text;
    expect(cell(row(page, on.id), "State")).toBe("enabled");
    expect(cell(row(page, off.id), "State")).toBe("disabled");
    expect(row(page, on.id)).toContain(`action="/channels/${on.id}/disable"`);
    expect(row(page, off.id)).toContain(`action="/channels/${off.id}/enable"`);
    expect(row(page, off.id)).not.toContain(`action="/channels/${off.id}/disable"`);
  });

  test("how deliveries go: why a failing channel fails, and whether it will retry, has given up, or waits while disabled", async () => {
    const { user, scope } = await newOrganization();
    const now = Date.now();
    const failing = async (name: string, enabled: boolean, status: "pending" | "failed") => {
      const channel = channelRecord(scope, { name, enabled });
      expect(await h.store.channels.insert(channel, { limit: 100 })).toBe(true);
      await h.store.channels.recordAttempt(channel.id, { at: now - HOUR, status, error: `${name}: HTTP 502` });
      return channel;
    };
    const retrying = await failing("Retrying", true, "pending");
    const givenUp = await failing("Given up", true, "failed");
    const paused = await failing("Paused", false, "pending");
    const page = (await user.browser.get("/channels?mode=live")).text;
    expect(cell(row(page, retrying.id), "Deliveries")).toContain("Retrying: HTTP 502");
    expect(cell(row(page, retrying.id), "Deliveries")).toContain("last attempt 1 hour ago, will retry");
    expect(cell(row(page, givenUp.id), "Deliveries")).toContain("last attempt 1 hour ago, given up");
    expect(cell(row(page, paused.id), "Deliveries")).toContain("last attempt 1 hour ago, no retry while disabled");
  });

  test("a filter in words (events and tags); the never-resolved warning only for PagerDuty", async () => {
    const { user, scope } = await newOrganization();
    const events = ["certificate.expiring"];
    const hook = channelRecord(scope, { name: "Filtered hook", filter: { events: events as never, tags: ["team:web", "env:prod"] } });
    const pager = channelRecord(scope, { name: "Pager", type: "pagerduty", config: { routingKey: "0123456789abcdef0123456789abcdef" }, signingSecret: null, filter: { events: events as never } });
    for (const c of [hook, pager]) expect(await h.store.channels.insert(c, { limit: 100 })).toBe(true);
    const page = (await user.browser.get("/channels?mode=live")).text;
    const name = cell(row(page, hook.id), "Name");
    expect(name).toContain("only certificate.expiring; tags team:web, env:prod");
    expect(row(page, hook.id)).not.toContain("data-unresolved");
    expect(row(page, pager.id)).toContain("data-unresolved");
  });

  test("a Telegram channel shows the chat it sends to", async () => {
    const { user, scope } = await newOrganization();
    const telegram = channelRecord(scope, { name: "Chat", type: "telegram", config: { botToken: "123456:ABCdefGhIJKlmNoPQRstuVWxyz", chatId: "@ops_alerts" }, signingSecret: null });
    expect(await h.store.channels.insert(telegram, { limit: 100 })).toBe(true);
    const page = (await user.browser.get("/channels?mode=live")).text;
    expect(cell(row(page, telegram.id), "Sends to")).toBe("@ops_alerts");
  });

  test("editing, a secret field's hint says it is shown masked and kept when left", async () => {
    const { user, scope } = await newOrganization();
    const telegram = channelRecord(scope, { name: "Chat", type: "telegram", config: { botToken: "123456:ABCdefGhIJKlmNoPQRstuVWxyz", chatId: "12345" }, signingSecret: null });
    expect(await h.store.channels.insert(telegram, { limit: 100 })).toBe(true);
    const edit = (await user.browser.get(`/channels/${telegram.id}/edit?mode=live`)).text;
    expect(edit).toContain("Shown masked: leave it to keep it, or type a new one.");
    const add = (await user.browser.get("/channels/new?type=telegram&mode=live")).text;
    expect(add).not.toContain("Shown masked");
  });
});

describe("the Watches tab", () => {
  test("each watch: subdomains or not, the issuances seen, its last error", async () => {
    const { user, scope } = await newOrganization();
    const now = Date.now();
    const watch = (domain: string, fields: { includeSubdomains: boolean; issuancesSeen: number; lastError: string | null }) => ({
      ...scope,
      id: newId("wch"),
      domain,
      autoMonitor: false,
      allowedIssuers: [],
      lastPolledAt: now - HOUR,
      cursor: null,
      baselineDone: true,
      pendingNames: [],
      nextPollAt: now + HOUR,
      createdAt: now - 2 * HOUR,
      updatedAt: now - 2 * HOUR,
      ...fields,
    });
    const broad = watch("broad.example", { includeSubdomains: true, issuancesSeen: 7, lastError: null });
    const narrow = watch("narrow.example", { includeSubdomains: false, issuancesSeen: 0, lastError: "The CT service answered 503." });
    for (const w of [broad, narrow]) expect(await h.store.watches.insert(w as never, { limit: 100 })).toBeTruthy();
    const page = (await user.browser.get("/watches?mode=live")).text;
    const watchRow = (id: string) => new RegExp(`<tr data-watch-id="${id}">[\\s\\S]*?</tr>`).exec(page)?.[0] ?? "";
    expect(["Subdomains", "Issuances seen", "Last error"].map((l) => cell(watchRow(broad.id), l))).toEqual(["yes", "7", "—"]);
    expect(["Subdomains", "Issuances seen", "Last error"].map((l) => cell(watchRow(narrow.id), l))).toEqual(["no", "0", "The CT service answered 503."]);
  });
});
