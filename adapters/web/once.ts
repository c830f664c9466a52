/**
 * Forms that create something shown only once (an API key, a channel's signing secret) carry a
 * one-time id. Sent again (the page that showed the secret reloaded, or history), the form creates
 * nothing: the page says it was done already. Sent twice at once, the second waits for the first: it
 * is "done already" only if the first did create it. The ids are kept in this process, the latest 10,000,
 * each with the user who sent it: an id another user sends is another id, and a value no form carries
 * (not a UUID) is not kept at all.
 *
 * @example
 * html`<form …>${onceField()}…</form>`;
 * const sending = await sendOnce(form.once, me.user.id);
 * if (sending === "done already") return alreadyDone();
 * try { create(); sending.finished(true); } catch (error) { sending.finished(false); throw error; }
 */
import { html, type Html } from "./html.ts";

const KEPT = 10_000;
/** Each id sent: whether its sending created what it was for (pending while it runs). */
const sent = new Map<string, Promise<boolean>>();

/** The hidden field that makes a form's submission one of a kind. */
export function onceField(): Html {
  return html`<input type="hidden" name="once" value="${crypto.randomUUID()}">`;
}

/** A sending of a one-time form: to be told how it finished (created, or refused and so sendable again). */
export interface Sending {
  finished(created: boolean): void;
}

/** The shape of the ids `onceField` writes. */
const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `userId`'s sending of `form`'s `once`, or "done already" when an earlier one created what it was for. */
export async function sendOnce(form: string | undefined, userId: string): Promise<Sending | "done already"> {
  if (!form || !ID.test(form)) return { finished: () => {} };
  const once = `${userId} ${form}`;
  for (;;) {
    const earlier = sent.get(once);
    if (earlier === undefined) break;
    if (await earlier) return "done already";
    // The earlier sending was refused and gave the id back (or another waiter took it since): look again.
  }
  let finish!: (created: boolean) => void;
  sent.set(once, new Promise<boolean>((resolve) => (finish = resolve)));
  if (sent.size > KEPT) sent.delete(sent.keys().next().value!);
  let told = false;
  return {
    // The first word is the one kept: a failure after the creation (rendering the page) does not give the id back.
    finished(created) {
      if (told) return;
      told = true;
      if (!created) sent.delete(once);
      finish(created);
    },
  };
}
