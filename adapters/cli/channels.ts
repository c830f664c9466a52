/**
 * `channel list` and `channel test` (CONTRACT §23): where alerts go, whether they get there, and a test
 * notification sent now, through the API's own operations (GET /v1/channels, POST /v1/channels/{id}/test).
 */
import { iso, type ChannelRecord, type Mode } from "../../core/base/mod.ts";
import type { ChannelView } from "../../core/schemas/mod.ts";
import type { Wired } from "../wiring/mod.ts";
import { modeFlag, requiredFlag, type CommandSpec } from "./command_table.ts";
import { ownerOf, table, withWired } from "./commands.ts";
import { operation } from "./certificates.ts";
import { findByIdOrName } from "./find_record.ts";
import { refusedAsPrivate } from "./check_targets.ts";

const PAGE = 100;

export const channelListCommand: CommandSpec = {
  name: "channel list",
  flags: ["org", "mode"],
  synopsis: "channel list --org ORG [--mode live|test]",
  help: [
    "Lists an organization's notification channels (--org: its id or name), newest first: id, name, type,",
    "enabled or not, and how their deliveries went (the last attempt, its status and error, and since when",
    "the channel has been failing). Secrets are masked as the API shows them. With --json: the channels as",
    "GET /v1/channels shows them, health included.",
  ].join("\n"),
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "org");
    const mode = modeFlag(flags);
    const channels = await withWired(config, async (wired) => {
      const org = await wired.core.services.admin.findOrganization(ref);
      const caller = { kind: "host", principal: ownerOf(org, mode) } as const;
      const all: ChannelView[] = [];
      let cursor: string | null | undefined;
      do {
        const query: Record<string, unknown> = { limit: PAGE, ...(cursor ? { cursor } : {}) };
        const page = await wired.core.call({ operation: operation(wired, "listChannels"), caller, query });
        all.push(...(page.data as ChannelView[]));
        cursor = page.nextCursor;
      } while (cursor);
      return all;
    });
    const text =
      channels.length === 0
        ? `No channels in ${mode} data: alerts go nowhere. Add one in the settings area (Channels) or with POST /v1/channels.`
        : table(
            ["ID", "NAME", "TYPE", "STATE", "LAST DELIVERY", "FAILING SINCE", "LAST ERROR"],
            channels.map((c) => {
              const health = (c as { health?: Health }).health;
              return [
                c.id,
                c.name,
                c.type,
                c.enabled ? "enabled" : "disabled",
                health?.lastDeliveryAt ? `${health.lastStatus} ${short(health.lastDeliveryAt)}` : "never",
                health?.failingSince ? short(health.failingSince) : "-",
                health?.lastError ?? "-",
              ];
            }),
          );
    return { json: channels, text };
  },
};

interface Health {
  lastDeliveryAt: string | null;
  lastStatus: string | null;
  lastError: string | null;
  failingSince: string | null;
}

/** "2026-05-01 10:00 UTC". */
function short(isoTime: string): string {
  return `${isoTime.slice(0, 10)} ${isoTime.slice(11, 16)} UTC`;
}

export const channelTestCommand: CommandSpec = {
  name: "channel test",
  flags: ["id", "org"],
  synopsis: "channel test --id CHANNEL [--org ORG]",
  help: [
    "Sends a test notification to one channel now, from this process (POST /v1/channels/{id}/test), and says",
    "how it went: exit 0 when it was delivered, 1 when it failed, with the reason on stderr. --id takes the",
    "channel's id (in channel list) or its name when no other channel has that name; --org (id or name)",
    "looks in that organization only. Run it with the server's settings (CERTKEEPER_SMTP_URL,",
    "CERTKEEPER_ALLOW_PRIVATE_TARGETS, …), since it delivers as the server would. With --json: { eventId,",
    "channelId, status, responseStatus, error }.",
  ].join("\n"),
  async run({ config, flags }) {
    const ref = requiredFlag(flags, "id");
    const { result, channel } = await withWired(config, async (wired) => {
      const found = await findByIdOrName(wired, ref, {
        kind: "channel",
        org: flags.org === undefined ? undefined : String(flags.org),
        get: (scope, id) => wired.store.channels.get(scope, id),
        list: (scope) => allChannels(wired, scope),
        notFound: "channel_not_found",
        listCommand: "channel list --org ORG",
      });
      const caller = { kind: "host", principal: ownerOf(found.org, found.mode) } as const;
      const answer = await wired.core.call({ operation: operation(wired, "testChannel"), caller, params: { id: found.record.id } });
      return { result: answer.data as { status: string; responseStatus: number | null; error: string | null }, channel: found.record };
    });
    const delivered = result.status === "delivered";
    const how = result.responseStatus === null ? "" : ` (it answered HTTP ${result.responseStatus})`;
    return {
      json: result,
      text: delivered
        ? channel.type === "email" && config.smtpUrl === undefined
          ? `The test email to "${channel.name}" was written to the outbox folder (./data/outbox), not sent: set CERTKEEPER_SMTP_URL for email to reach anyone.`
          : `The test notification reached "${channel.name}" (${channel.type})${how} at ${iso(Date.now())}.`
        : `The test notification to "${channel.name}" (${channel.type}) failed.`,
      notes: delivered
        ? []
        : [
            `Why: ${result.error ?? "no answer"}`,
            // The test ran in this process, with this shell's settings: a server allowed private targets still reaches them.
            ...(refusedAsPrivate(config, result.error)
              ? [
                  "This test ran with this shell's settings, without CERTKEEPER_ALLOW_PRIVATE_TARGETS=true: if the server has it, run the command with the server's settings (its environment or .env) and test again, as the channel's health now shows this failure.",
                ]
              : []),
          ],
      exitCode: delivered ? 0 : 1,
    };
  },
};

/** Every channel of the scope, read in pages. */
async function allChannels(wired: Wired, scope: { organizationId: string; mode: Mode }): Promise<ChannelRecord[]> {
  const all: ChannelRecord[] = [];
  let before: { createdAt: number; id: string } | undefined;
  for (;;) {
    const page = await wired.store.channels.list(scope, { limit: PAGE, before });
    all.push(...page);
    if (page.length < PAGE) return all;
    const last = page.at(-1)!;
    before = { createdAt: last.createdAt, id: last.id };
  }
}
