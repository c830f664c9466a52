/**
 * Escaped HTML templates: `html\`<p>${text}</p>\`` escapes every interpolated value unless it is
 * itself an {@link Html} made by this tag. There is no way to interpolate a raw string, so nothing a
 * user typed can become markup.
 *
 * @example
 * const item = (name: string) => html`<li>${name}</li>`;
 * html`<ul>${["a<b", "c"].map(item)}</ul>`.value; // "<ul><li>a&lt;b</li><li>c</li></ul>"
 */

export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlValue = Html | string | number | null | undefined | false | readonly HtmlValue[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

function render(value: HtmlValue): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  if (value === null || value === undefined || value === false) return "";
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: HtmlValue[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

