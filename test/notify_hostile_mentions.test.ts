/**
 * The Slack payload is also what Slack-compatible servers receive (CONTRACT §6: "which Slack-compatible
 * chat servers (Mattermost, Rocket.Chat) accept too"). Slack itself links `@name` text only with
 * `link_names`, but Mattermost reads its own mentions in a webhook post's text: `@username` notifies
 * that user (mattermost/mattermost#24930), `@channel`/`@all`/`@here` the channel; Rocket.Chat likewise
 * parses `@all`/`@here` (RocketChat/Rocket.Chat#12247). A certificate's issuer is its server's to
 * write: "@channel" there would page a whole channel on every alert about that certificate. Discord is
 * protected by `allowed_mentions: { parse: [] }`; the Slack payload's text carries no live mention.
 */
import { expect, test } from "bun:test";
import { describeEvent } from "../core/notify/_describe.ts";
import { escapeSlack, slackPayload } from "../core/notify/chat_payloads.ts";
import { certificateView, eventOf } from "./support/notify_events.ts";

const e = eventOf("certificate.invalid", { certificate: certificateView({ issuer: "@channel @all @here @alice" }) });

test("Slack payload (as Mattermost and Rocket.Chat read it): no @-mention from the certificate's issuer stays live", () => {
  const body = JSON.stringify(slackPayload(e, describeEvent(e)));
  expect(body).toContain("example.com");
  expect(body).not.toMatch(/(^|[^\w@])@(channel|all|here|alice)\b/);
});

test("an @ inside a word, an address or a URL is left whole (no mention there), in Slack's payload", () => {
  expect(escapeSlack("see https://ca.example/@incident and ops@example.com")).toBe("see https://ca.example/@incident and ops@example.com");
  expect(escapeSlack("(@channel) @here")).toBe("(@\u2060channel) @\u2060here");
});
