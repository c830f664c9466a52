/** POST /v1/channels/{id}/test: send a test event to this channel now, one attempt, and say how it went. */
import { CertkeeperError } from "../base/errors.ts";
import { ChannelTestResult } from "../schemas/channel.ts";
import { Envelope, IdParams } from "../schemas/common.ts";
import { defineOperation, NoQuery } from "./operation.ts";
import { findChannel } from "./_channels.ts";

export const testChannel = defineOperation({
  id: "testChannel",
  embed: "channels.test",
  method: "POST",
  path: "/v1/channels/:id/test",
  tag: "Channels",
  summary: "Send a test notification to a channel",
  description:
    "Sends a `test` event to this channel at once (even when it is disabled) and answers how it went. A failed " +
    "test is not retried; the test event is listed by GET /v1/events like any other.",
  access: "write",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(ChannelTestResult),
  errors: ["permission_denied", "channel_not_found"],
  async handle({ principal, services }, { params }) {
    const channel = await findChannel(services, principal.scope, params.id!);
    if (!services.deliveries) throw new CertkeeperError("internal_error", "Notifications are not configured in this process.");
    const { event, result } = await services.deliveries.sendTest(channel);
    return {
      data: {
        eventId: event.id,
        channelId: channel.id,
        status: result.delivered ? "delivered" : "failed",
        responseStatus: result.responseStatus,
        error: result.error,
      },
    };
  },
});
