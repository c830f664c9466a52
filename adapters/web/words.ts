/**
 * The API's refusals in the console's words. Every rule is the operation's and so is its message; a
 * message names a field by its place in the JSON body (`alertThresholds[1]`, `config.webhookUrl`) and
 * points an API client to a route (`list your channels with GET /v1/channels`). A console user sees
 * the field's label on the form instead, and no route.
 */
import { CHANNEL_FIELDS } from "./forms.ts";

/** The forms' labels of the API's fields. */
const LABELS: Record<string, string> = {
  domain: "Domain",
  port: "Port",
  name: "Name",
  tags: "Tags",
  protocol: "Protocol",
  connectTo: "Connect to",
  alertThresholds: "Alert thresholds",
  alertPolicy: "Alert policy",
  mutedUntil: "Notifications",
  includeSubdomains: "Subdomains too",
  autoMonitor: "Monitor the names it finds",
  allowedIssuers: "Allowed issuers",
  "filter.events": "Only these events",
  "filter.tags": "Only certificates with one of these tags",
  ...Object.fromEntries(Object.values(CHANNEL_FIELDS).flat().map((field) => [`config.${field.name}`, field.label.replace(/ \(optional\)$/, "")])),
  // Slack's, Discord's and Teams' forms each name theirs in their own words.
  "config.webhookUrl": "Webhook URL",
};

const ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"];

/** `alertThresholds[1]` → `“Alert thresholds” (its second value)`; a path the forms do not show, as it is. */
function labelOf(path: string): string | undefined {
  const match = /^([A-Za-z]+(?:\.[A-Za-z]+)?)(?:\[(\d+)\])?$/.exec(path);
  const label = match && Object.hasOwn(LABELS, match[1]!) ? LABELS[match[1]!] : undefined;
  if (!label) return undefined;
  if (match![2] === undefined) return `“${label}”`;
  const index = Number(match![2]);
  return `“${label}” (${index < ORDINALS.length ? `its ${ORDINALS[index]} value` : `value number ${index + 1}`})`;
}

/** A refusal's message as the console shows it. */
export function inConsoleWords(message: string): string {
  return (
    message
      // `Field "alertThresholds[1]" must…` and `needs "config.email", …`: the form's label.
      // (Only there: a value quoted elsewhere, `got "port"`, stays as typed.)
      .replace(/(Field |needs )"([A-Za-z.]+(?:\[\d+\])?)"/g, (whole, lead: string, path: string) => {
        const label = labelOf(path);
        return label ? `${lead === "needs " ? lead : ""}${label}` : whole;
      })
      // `use config.headers for credentials`: a field named without quotes.
      .replace(/\bconfig\.([A-Za-z]+)\b/g, (whole) => labelOf(whole) ?? whole)
      // `: list your channels with GET /v1/channels.`, `: get it with GET /v1/certificates?domain=….`
      .replace(/: (?:list your \w+|get it) with GET \/v1\/\S*$/, ".")
  );
}

/** The refusals that name no field in their words, by the API's code: the form field each is about. */
const FIELD_OF_CODE: Record<string, string> = {
  invalid_domain: "domain",
  duplicate_domain: "domain",
  duplicate_watch: "domain",
  certificate_unreachable: "domain",
  invalid_channel_type: "type",
};

/**
 * The form field a refusal is about (its `name` on the form), when one can be told: the one its message
 * names (`Field "config.url" …`, a list's item as the list), else the one its code is about.
 */
export function fieldOfRefusal(error: { code: string; message: string }): string | undefined {
  const named = /(?:Field |needs )"([A-Za-z]+(?:\.[A-Za-z]+)?)(?:\[\d+\])?"/.exec(error.message)?.[1];
  return named ?? FIELD_OF_CODE[error.code];
}
