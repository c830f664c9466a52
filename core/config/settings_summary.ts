/**
 * The settings a process runs with that differ from the defaults, named by their variables and
 * masked where they carry a credential: what the server logs at start (CONTRACT §23), so a log shows
 * how it was configured without showing a secret.
 */
import { DEFAULT_CONFIG, type Config } from "./config.ts";
import { MASK, maskUrl } from "./mask_url.ts";
import type { ResolveRule } from "./resolve_rules.ts";

export { MASK };

/** `{ CERTKEEPER_PORT: "3001", CERTKEEPER_SMTP_URL: "smtp://ops:********@mail:587", … }`, in the config's order. */
export function changedSettings(config: Config, defaults: Config = DEFAULT_CONFIG): Record<string, string> {
  const changed: Record<string, string> = {};
  for (const [field, value] of Object.entries(config)) {
    const fallback = (defaults as unknown as Record<string, unknown>)[field];
    if (JSON.stringify(value) === JSON.stringify(fallback)) continue;
    changed[variableOf(field)] = render(field, value);
  }
  return changed;
}

/** `checkIntervalMs` → `CERTKEEPER_CHECK_INTERVAL`: the variable a config field is read from. */
export function variableOf(field: string): string {
  return `CERTKEEPER_${field.replace(/Ms$/, "").replace(/([a-z0-9])([A-Z])/g, "$1_$2").toUpperCase()}`;
}

/** The switches documented as `on` and `off` (the others, as `true` and `false`). */
const ON_OFF = new Set(["revocation", "ari"]);

function render(field: string, value: unknown): string {
  if (value === undefined || value === null) return "(unset)";
  // Written as the documentation spells them: CERTKEEPER_REVOCATION=off, CERTKEEPER_ARI=off.
  if (ON_OFF.has(field)) return value ? "on" : "off";
  if (/token|password|secret/i.test(field)) return MASK;
  if (/Ms$/.test(field)) return Array.isArray(value) ? value.map((ms) => duration(Number(ms))).join(",") : duration(Number(value));
  if (field === "resolve") return (value as ResolveRule[]).map((rule) => `${rule.pattern}=${rule.address === null ? "none" : (rule.addresses ?? [rule.address]).join("|")}`).join(",");
  if (field === "acmeDirectories") return (value as Array<{ issuer: string; url: string }>).map(({ issuer, url }) => `${issuer}=${maskUrl(url)}`).join(",");
  if (typeof value === "string") return maskUrl(value);
  // Any other list or object: every string in it masked as a URL would be, whatever its place.
  return typeof value === "object" ? JSON.stringify(value, (_key, inner: unknown) => (typeof inner === "string" ? maskUrl(inner) : inner)) : String(value);
}

/** 21600000 → "6h", 1500 → "1500ms": the shortest exact spelling of CONTRACT §1's durations. */
function duration(ms: number): string {
  for (const [unit, size] of [["d", 86_400_000], ["h", 3_600_000], ["m", 60_000], ["s", 1000]] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
