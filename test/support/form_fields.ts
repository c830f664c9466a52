/**
 * What a browser would send: the fields of a form on a settings-area page, read from its HTML (the
 * first value of each name, checkboxes only when checked), so a test can submit a form as it was shown.
 */
import { expect } from "bun:test";

const unescape = (s: string) => s.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
const attr = (tag: string, name: string) => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? unescape(m[1]!) : undefined;
};

/** The fields the form with this action would send, as a browser sends them (first value of each name). */
export function formFields(html: string, action: string): Record<string, string> {
  const at = html.indexOf(`action="${action}"`);
  expect(at).toBeGreaterThan(-1);
  const form = html.slice(at, html.indexOf("</form>", at));
  const fields: Record<string, string> = {};
  const set = (name: string | undefined, value: string) => {
    if (name && !(name in fields)) fields[name] = value;
  };
  for (const m of form.matchAll(/<input\b[^>]*>/g)) {
    const tag = m[0];
    const type = attr(tag, "type") ?? "text";
    if (type === "checkbox" || type === "radio") {
      if (/\schecked\b/.test(tag)) set(attr(tag, "name"), attr(tag, "value") ?? "on");
    } else set(attr(tag, "name"), attr(tag, "value") ?? "");
  }
  for (const m of form.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) set(attr(m[1]!, "name"), unescape(m[2]!));
  for (const m of form.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
    const options = [...m[2]!.matchAll(/<option\b([^>]*)>/g)].map((o) => o[1]!);
    const chosen = options.find((o) => /\sselected\b/.test(o)) ?? options[0]!;
    set(attr(m[1]!, "name"), attr(chosen, "value") ?? "");
  }
  return fields;
}
