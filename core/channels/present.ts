/** A channel as callers see it. */
import { iso } from "../base/time.ts";
import type { ChannelRecord } from "../base/records.ts";
import type { ChannelView } from "../schemas/channel.ts";
import { maskConfig } from "./channel_config.ts";

export function presentChannel(channel: ChannelRecord): ChannelView {
  return {
    id: channel.id,
    type: channel.type,
    name: channel.name,
    enabled: channel.enabled,
    config: maskConfig(channel.type, channel.config),
    filter: channel.filter,
    createdAt: iso(channel.createdAt),
    updatedAt: iso(channel.updatedAt),
    health: presentHealth(channel.health),
  };
}

/** CONTRACT §23's `health`: nulls until the first attempt. */
function presentHealth(health: ChannelRecord["health"]): ChannelView["health"] {
  const time = (ms: number | null | undefined) => (ms === null || ms === undefined ? null : iso(ms));
  return {
    lastDeliveryAt: time(health?.lastDeliveryAt),
    lastStatus: health?.lastStatus ?? null,
    lastError: health?.lastError ?? null,
    failingSince: time(health?.failingSince),
  };
}
