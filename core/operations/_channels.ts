/** Helpers shared by the channel operations. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { isId } from "../base/ids.ts";
import type { ChannelRecord, Scope } from "../base/records.ts";
import type { Services } from "./services.ts";

/** The channel with this id in the caller's scope; another organization's is as missing as none. */
export async function findChannel(services: Services, scope: Scope, id: string): Promise<ChannelRecord> {
  const channel = isId("ch", id) ? await services.store.channels.get(scope, id) : null;
  if (!channel) throw channelNotFound(id);
  return channel;
}

export function channelNotFound(id: string): CertkeeperError {
  return new CertkeeperError("channel_not_found", `No channel with id ${quote(id)}: list your channels with GET /v1/channels.`);
}
