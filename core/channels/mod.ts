/** Notification channels: their types, config rules and masking, and the view. */
export {
  CHANNEL_TYPES,
  checkTargetResolves,
  MASK,
  maskChatUrl,
  maskConfig,
  parseChannelConfig,
  parseChannelType,
  SPEC_CHAT_TYPE,
  type ConfigCheckOptions,
} from "./channel_config.ts";
export { presentChannel } from "./present.ts";
