/**
 * Forms that create something shown only once (an API key, a channel's signing secret) carry a
 * one-time id. Sent again (the page that showed the secret reloaded, or history), the form creates
 * nothing: the page says it was done already. The ids are kept in this process, the latest 10,000.
 *
 * @example
 * html`<form …>${onceField()}…</form>`;
 * if (!claimOnce(form.once)) return alreadyDone();
 */
import { html, type Html } from "./html.ts";

const KEPT = 10_000;
const claimed = new Set<string>();

/** The hidden field that makes a form's submission one of a kind. */
export function onceField(): Html {
  return html`<input type="hidden" name="once" value="${crypto.randomUUID()}">`;
}

/** True the first time `once` is sent (and a form without one, as always); false when it was sent before. */
export function claimOnce(once: string | undefined): boolean {
  if (!once) return true;
  if (claimed.has(once)) return false;
  claimed.add(once);
  if (claimed.size > KEPT) claimed.delete(claimed.values().next().value!);
  return true;
}

/** Gives `once` back: what it was to create was not created (the form was refused), so it may be sent again. */
export function releaseOnce(once: string | undefined): void {
  if (once) claimed.delete(once);
}
