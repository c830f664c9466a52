/**
 * The Channels tab: the list; adding, editing, enabling, disabling, testing and removing channels of
 * every type. Every change is the API's operation, run as the signed-in user (members only read).
 */
import type { Core } from "../../../core/app/mod.ts";
import type { SignedIn } from "../../../core/accounts/mod.ts";
import { authorize } from "../../../core/auth/mod.ts";
import { CertkeeperError, CHANNEL_TYPES, type ChannelType, type Mode } from "../../../core/base/mod.ts";
import type { ChannelView } from "../../../core/schemas/mod.ts";
import { change, noticeOf, signedIn, type Form, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { CHANNEL_FIELDS, channelConfig, channelFilter } from "../forms.ts";
import { channelCreatedPage, channelFormPage, channelsPage, removeChannelPage } from "../views/channels.ts";
import { modeOf, refusesInput } from "./dashboard.ts";
import { sendOnce } from "../once.ts";
import { fieldOfRefusal, inConsoleWords } from "../words.ts";
import { refusedAt } from "../refused.ts";

function typeOf(value: string | null | undefined): ChannelType {
  if (!(CHANNEL_TYPES as readonly string[]).includes(value ?? "")) {
    throw new CertkeeperError("invalid_channel_type", `Channel type "${value ?? ""}" does not exist: choose one of ${CHANNEL_TYPES.join(", ")}.`);
  }
  return value as ChannelType;
}

export function channelRoutes(core: Core): WebRoute[] {
  const { console } = core.accounts;
  const channelOf = async (me: SignedIn, mode: Mode, id: string) => (await console.as(me, mode).run("getChannel", { params: { id } })).data as ChannelView;
  const modeIn = (request: Request) => modeOf(new URL(request.url).searchParams.get("mode"));

  return [
    {
      method: "GET",
      path: "/channels",
      handle: signedIn(core, async ({ request }, me) => {
        const mode = modeIn(request);
        return htmlResponse(channelsPage({ me, mode, channels: await console.as(me, mode).channels(), notice: noticeOf(request) }));
      }),
    },
    {
      method: "GET",
      path: "/channels/new",
      handle: signedIn(core, async ({ request }, me) => {
        const mode = modeIn(request);
        const type = typeOf(new URL(request.url).searchParams.get("type"));
        // Shown to members too, who are refused when they send it, as by the API.
        return htmlResponse(channelFormPage({ me, mode, type }));
      }),
    },
    {
      method: "POST",
      path: "/channels",
      handle: change(core, async (_input, me, form) => {
        const mode = modeOf(form.mode);
        // The type as sent: the API judges it (invalid_channel_type), as it judges the rest.
        const type = (form.type ?? "") as ChannelType;
        // The role first, as the API's order has it: a member's form is refused whatever it holds.
        authorize(me.user.role, "write");
        const sending = await sendOnce(form.once, me.user.id);
        if (sending === "done already") {
          const channels = await console.as(me, mode).channels();
          return htmlResponse(channelsPage({ me, mode, channels, error: "This form was sent already: the channel was added then (its signing secret, if it has one, was shown that once). It is in the list below." }));
        }
        let created: ChannelView;
        try {
          const body = { type, name: (form.name ?? "").trim(), config: channelConfig(type, form), ...withFilter(form) };
          created = (await console.as(me, mode).run("addChannel", { body })).data as ChannelView;
          sending.finished(true);
        } catch (error) {
          sending.finished(false);
          if (!refusesInput(error) || !(CHANNEL_TYPES as readonly string[]).includes(type)) throw error;
          return htmlResponse(refusedAt(channelFormPage({ me, mode, type, form: withoutSecrets(type, form), error: inConsoleWords(error.message) }), fieldOfRefusal(error)), { status: error.status });
        }
        const secret = (created.config as { signingSecret?: unknown }).signingSecret;
        // Answered here, not redirected: the secret must not travel through a URL or be fetchable again.
        if (typeof secret === "string") return htmlResponse(channelCreatedPage(me, mode, created, secret));
        return redirect(`/channels?mode=${mode}&notice=channel-added`);
      }),
    },
    {
      method: "GET",
      path: "/channels/:id/edit",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeIn(request);
        const channel = await channelOf(me, mode, params.id!);
        return htmlResponse(channelFormPage({ me, mode, type: channel.type, channel }));
      }),
    },
    {
      method: "POST",
      path: "/channels/:id/edit",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        const acting = console.as(me, mode);
        const channel = (await acting.run("getChannel", { params: { id: params.id! } })).data as ChannelView;
        // The role first, as the API's order has it: a member's form is refused whatever it holds.
        authorize(me.user.role, "write");
        try {
          // Inside the try: a header line the form cannot read is refused on the form, as the API's refusals are.
          const body = {
            name: (form.name ?? "").trim(),
            enabled: form.enabled === "1",
            config: channelConfig(channel.type, form),
            filter: channelFilter(form),
          };
          await acting.run("patchChannel", { params: { id: channel.id }, body });
        } catch (error) {
          if (!refusesInput(error) || error.status === 404) throw error;
          return htmlResponse(refusedAt(channelFormPage({ me, mode, type: channel.type, channel, form: withoutSecrets(channel.type, form), error: inConsoleWords(error.message) }), fieldOfRefusal(error)), {
            status: error.status,
          });
        }
        return redirect(`/channels?mode=${mode}&notice=channel-updated`);
      }),
    },
    ...(["enable", "disable"] as const).map(
      (verb): WebRoute => ({
        method: "POST",
        path: `/channels/:id/${verb}`,
        handle: change(core, async ({ params }, me, form) => {
          const mode = modeOf(form.mode);
          await console.as(me, mode).run("patchChannel", { params: { id: params.id! }, body: { enabled: verb === "enable" } });
          return redirect(`/channels?mode=${mode}&notice=channel-${verb}d`);
        }),
      }),
    ),
    {
      method: "GET",
      path: "/channels/:id/remove",
      handle: signedIn(core, async ({ request, params }, me) => {
        const mode = modeIn(request);
        return htmlResponse(removeChannelPage(me, mode, await channelOf(me, mode, params.id!)));
      }),
    },
    {
      method: "POST",
      path: "/channels/:id/remove",
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        await console.as(me, mode).run("deleteChannel", { params: { id: params.id! } });
        return redirect(`/channels?mode=${mode}&notice=channel-removed`);
      }),
    },
    {
      method: "POST",
      path: "/channels/:id/test",
      // The answer is the page itself, with how the test went: nothing of it travels in an address.
      handle: change(core, async ({ params }, me, form) => {
        const mode = modeOf(form.mode);
        const acting = console.as(me, mode);
        const result = (await acting.run("testChannel", { params: { id: params.id! } })).data as {
          channelId: string;
          status: string;
          responseStatus: number | null;
          error: string | null;
        };
        const channels = await acting.channels();
        const name = channels.find((channel) => channel.id === result.channelId)?.name ?? result.channelId;
        if (result.status === "delivered") {
          const how = result.responseStatus === null ? "" : ` (it answered ${result.responseStatus})`;
          const type = channels.find((channel) => channel.id === result.channelId)?.type;
          // Without a mail server, mail goes to files on the server: nobody receives it.
          const notice =
            type === "email" && core.services.config.smtpUrl === undefined
              ? `The test email to “${name}” was written to the server's outbox folder (./data/outbox), not sent: set CERTKEEPER_SMTP_URL for email to reach anyone.`
              : `The test notification reached “${name}”${how}.`;
          return htmlResponse(channelsPage({ me, mode, channels, notice }));
        }
        return htmlResponse(channelsPage({ me, mode, channels, error: `The test notification to “${name}” failed: ${result.error ?? "no answer"}.` }));
      }),
    },
  ];
}

/** The filter of a channel's form, when it gives one (add: absent means every event). */
function withFilter(form: Form): { filter?: Record<string, unknown> } {
  const filter = channelFilter(form);
  return filter ? { filter } : {};
}

/**
 * A refused form shown again keeps what was typed, but not a secret typed into it: the routing key, the
 * bot token and the webhook's headers are dropped, so the form shows what it shows before any typing
 * (adding: empty; editing: the stored values, masked, which saving keeps). A chat webhook URL stays as
 * typed: only its end is secret, and it is often the field to fix.
 */
function withoutSecrets(type: ChannelType, form: Form): Form {
  const kept: Form = { ...form };
  for (const field of CHANNEL_FIELDS[type]) if (field.secret && field.type !== "url") delete kept[`config.${field.name}`];
  return kept;
}
