/**
 * A page answering a refused form, marked for people who do not see it (WCAG 3.3.1, 1.3.1, 4.1.2):
 * the field the refusal is about is marked invalid, described by the message and focused (`autofocus`:
 * no script needed), or else the message itself is; a screen reader then reads the message where the
 * user is, which a `role="alert"` box already on a new page is not.
 */
import { Html } from "./html.ts";

const ERROR_ID = "form-error";

/**
 * `page` with its first error box and the control named `field` (if there is one; within the element
 * of id `formId` when the page has other forms with a field of that name) marked so.
 */
export function refusedAt(page: Html, field: string | undefined, formId?: string): Html {
  let text = page.value.replace(/<div class="error" role="alert">/, `<div class="error" role="alert" id="${ERROR_ID}" tabindex="-1">`);
  const escaped = field?.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const from = formId === undefined ? 0 : Math.max(0, text.indexOf(`id="${formId}"`));
  const pattern = escaped === undefined ? null : new RegExp(`<(input|select|textarea)\\b[^>]*\\bname="${escaped}"[^>]*>`, "g");
  if (pattern) pattern.lastIndex = from;
  const control = pattern?.exec(text) ?? null;
  if (control) {
    let tag = control[0].replace(/ autofocus\b/, "");
    tag = /\baria-describedby="/.test(tag)
      ? tag.replace(/\baria-describedby="/, `aria-describedby="${ERROR_ID} `)
      : tag.replace(/^<(input|select|textarea)\b/, `$& aria-describedby="${ERROR_ID}"`);
    tag = tag.replace(/^<(input|select|textarea)\b/, '$& aria-invalid="true" autofocus');
    text = text.slice(0, control.index) + tag + text.slice(control.index + control[0].length);
  } else {
    text = text.replace(`id="${ERROR_ID}" tabindex="-1">`, `id="${ERROR_ID}" tabindex="-1" autofocus>`);
  }
  return new Html(text);
}
