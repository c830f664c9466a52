/** CERTKEEPER_CT_LOG_LIST checked at start: a list file that cannot be read or is no log list stops the server. */
import { readFileSync } from "node:fs";
import { ConfigError } from "../config/config.ts";
import { parseLogList } from "../ctlogs/mod.ts";

/** Throws a ConfigError naming the variable when `location` is a file that is not a readable log list (URLs are read later). */
export function ctLogListAtStart(location: string): void {
  if (/^https:\/\//i.test(location)) return;
  let text: string;
  try {
    text = readFileSync(location, "utf8");
  } catch (error) {
    throw new ConfigError("CERTKEEPER_CT_LOG_LIST", `cannot read "${location}" (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    parseLogList(text);
  } catch (error) {
    throw new ConfigError("CERTKEEPER_CT_LOG_LIST", `"${location}": ${(error as Error).message}`);
  }
}
