/**
 * Reads a log list in the schema of Chrome's log_list.json v3: `operators[]`, each with `logs[]`
 * (RFC 6962: `url`) and `tiled_logs[]` (static-ct-api: `submission_url`, `monitoring_url`), each log
 * with its base64 DER `key`, `log_id` and `state`. Logs whose state is usable, qualified or readonly
 * are followed; pending, rejected and retired ones are not.
 */
import { readLogKey, type LogKey } from "./tree_head.ts";

export type LogKind = "rfc6962" | "tiled";

export interface LogSpec {
  kind: LogKind;
  /**
   * Where its entries are read, with a trailing slash: the RFC 6962 `url`, or the tile log's
   * `monitoring_url`. It names the log in the database, the API and metrics.
   */
  url: string;
  /** A tile log's checkpoint origin: its submission prefix without scheme and trailing slash. */
  origin: string | null;
  description: string;
  key: LogKey;
  /** The list's base64 key, as given. */
  keyBase64: string;
}

export class LogListError extends Error {
  constructor(
    message: string,
    /** The log it is about, when it is about one. */
    readonly log = "",
  ) {
    super(message);
    this.name = "LogListError";
  }
}

const FOLLOWED_STATES = ["usable", "qualified", "readonly"];
/** More logs than any list has held; a list beyond it is not a log list. */
const MAX_LOGS = 1000;

/** A list's logs, and those it names that cannot be followed (an unknown key type, a broken URL), with why. */
export interface LogList {
  logs: LogSpec[];
  skipped: Array<{ log: string; reason: string }>;
}

/**
 * Parses the list's JSON text; throws LogListError when it is not such a list at all. A log that
 * cannot be followed is skipped (and said why), so a list that gains a new kind of key keeps working.
 */
export function parseLogList(text: string): LogList {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new LogListError("the log list is not JSON");
  }
  const operators = (json as { operators?: unknown } | null)?.operators;
  if (!Array.isArray(operators)) throw new LogListError("the log list has no operators array (Chrome's log_list.json v3 schema)");
  const specs: LogSpec[] = [];
  const skipped: LogList["skipped"] = [];
  const seen = new Set<string>();
  for (const operator of operators) {
    const { logs = [], tiled_logs: tiled = [] } = (operator ?? {}) as { logs?: unknown; tiled_logs?: unknown };
    if (!Array.isArray(logs) || !Array.isArray(tiled)) throw new LogListError("an operator's logs or tiled_logs is not an array");
    for (const [kind, list] of [["rfc6962", logs], ["tiled", tiled]] as const) {
      for (const raw of list) {
        const log = (raw ?? {}) as Record<string, unknown>;
        const state = typeof log.state === "object" && log.state !== null ? Object.keys(log.state) : [];
        if (!state.some((name) => FOLLOWED_STATES.includes(name))) continue;
        let spec: LogSpec;
        try {
          spec = readLog(kind, log);
        } catch (error) {
          if (!(error instanceof LogListError)) throw error;
          skipped.push({ log: error.log, reason: error.message });
          continue;
        }
        if (seen.has(spec.url)) continue;
        seen.add(spec.url);
        specs.push(spec);
        if (specs.length > MAX_LOGS) throw new LogListError(`the log list names more than ${MAX_LOGS} logs`);
      }
    }
  }
  return { logs: specs, skipped };
}

function readLog(kind: LogKind, log: Record<string, unknown>): LogSpec {
  const description = typeof log.description === "string" ? log.description.slice(0, 200) : "";
  const name = description || String(log.url ?? log.monitoring_url ?? "a log");
  const urlField = kind === "rfc6962" ? log.url : (log.monitoring_url ?? log.url);
  const url = prefix(urlField);
  if (!url) throw new LogListError(`its ${kind === "rfc6962" ? "url" : "monitoring_url"} is not an http(s) URL`, name);
  const submission = kind === "tiled" ? prefix(log.submission_url ?? log.url) : null;
  if (kind === "tiled" && !submission) throw new LogListError(`its submission_url is not an http(s) URL`, name);
  if (typeof log.key !== "string") throw new LogListError(`it has no key`, name);
  let key: LogKey;
  try {
    key = readLogKey(log.key);
  } catch (error) {
    throw new LogListError(`${(error as Error).message}`, name);
  }
  if (typeof log.log_id === "string" && Buffer.from(log.log_id, "base64").compare(Buffer.from(key.logId)) !== 0) {
    throw new LogListError(`its log_id is not the SHA-256 of its key`, name);
  }
  return {
    kind,
    url,
    origin: submission ? submission.replace(/^https?:\/\//, "").replace(/\/+$/, "") : null,
    description,
    key,
    keyBase64: log.key,
  };
}

/** An http(s) URL prefix without query, fragment or credentials, ending with one slash. */
function prefix(value: unknown): string | null {
  if (typeof value !== "string") return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if ((url.protocol !== "https:" && url.protocol !== "http:") || url.search || url.hash || url.username || url.password) return null;
  return url.href.replace(/\/*$/, "/");
}
