/**
 * Channel routing (CONTRACT §16): which events a channel receives. A filter names event kinds, tags,
 * or both; an event matches when its kind is listed (if kinds are given) and its certificate carries
 * at least one of the tags (if tags are given). Test events ignore filters; muted events go nowhere.
 */
import { Type } from "@sinclair/typebox";
import type { ChannelFilter, ChannelRecord, EventRecord, Scope } from "../base/records.ts";
import { Filter } from "../schemas/channel_filter.ts";
import { validate } from "../schemas/validate.ts";

const FilterField = Type.Object({ filter: Filter });

/**
 * A `filter` field of a request: null or absent is none; otherwise it must match {@link Filter}, and
 * the first problem is reported by its path (`filter.events[0]`), as invalid_request.
 */
export function parseFilter(raw: unknown): ChannelFilter | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === null) return null;
  return normalizeFilter(validate(FilterField, { filter: raw }).filter as ChannelFilter);
}

/** The filter as stored: lists sorted, empty filters as none. */
export function normalizeFilter(filter: ChannelFilter | null | undefined): ChannelFilter | null {
  if (!filter) return null;
  const normalized: ChannelFilter = {};
  if (filter.events) normalized.events = [...filter.events].sort();
  if (filter.tags) normalized.tags = [...filter.tags].sort();
  return Object.keys(normalized).length === 0 ? null : normalized;
}

/** The tags of the certificate an event is about, as the event recorded them; null without a certificate. */
function tagsOf(event: EventRecord): string[] | null {
  const certificate = event.data.certificate as { tags?: unknown } | undefined;
  if (typeof certificate !== "object" || certificate === null) return null;
  return Array.isArray(certificate.tags) ? certificate.tags.filter((tag): tag is string => typeof tag === "string") : [];
}

/** Whether `filter` lets `event` through. */
export function filterAccepts(filter: ChannelFilter | null, event: EventRecord): boolean {
  if (event.type === "test" || !filter) return true;
  if (filter.events && !filter.events.includes(event.type)) return false;
  if (filter.tags) {
    const tags = tagsOf(event);
    if (!tags || !filter.tags.some((tag) => tags.includes(tag))) return false;
  }
  return true;
}

/** Whether the event was recorded while its certificate was muted (CONTRACT §16): it is delivered nowhere. */
export function isMuted(event: EventRecord): boolean {
  return event.data.muted === true;
}

/**
 * The channels an event goes to: the enabled channels of its scope whose filter accepts it, none
 * when it is muted. Both stores route through this one rule.
 */
export function routeEvent<C extends Pick<ChannelRecord, "enabled" | "filter"> & Scope>(event: EventRecord, channels: Iterable<C>): C[] {
  if (isMuted(event)) return [];
  const routed: C[] = [];
  for (const channel of channels) {
    if (channel.enabled && channel.organizationId === event.organizationId && channel.mode === event.mode && filterAccepts(channel.filter, event)) {
      routed.push(channel);
    }
  }
  return routed;
}
