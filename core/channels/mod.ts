/** Notification channels: their types, config rules and masking, and the view. */
export {
  CHANNEL_TYPES,
  channelSecrets,
  checkTargetResolves,
  MASK,
  maskChatUrl,
  maskConfig,
  parseChannelConfig,
  parseChannelType,
  scrubSecrets,
  SPEC_CHAT_TYPE,
  type ConfigCheckOptions,
} from "./channel_config.ts";
export { presentChannel } from "./present.ts";
export { filterAccepts, isMuted, normalizeFilter, parseFilter, routeEvent } from "./channel_filter.ts";
