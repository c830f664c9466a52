/**
 * Reading a log list in the schema of Chrome's log_list.json v3 (CONTRACT §21): a log whose log_id is
 * not the SHA-256 of its key, or whose URL carries a query, is skipped and said why (the list is not
 * believed about that log); a log the list names twice (under two operators, say) is followed once.
 */
import { expect, test } from "bun:test";
import { parseLogList } from "../core/ctlogs/log_list.ts";
import { FixtureLog, logListJson } from "./support/ct_log_server.ts";

function fixture(kind: "rfc6962" | "tiled", url: string): FixtureLog {
  const log = new FixtureLog({ kind, name: `${kind} ${url}` });
  log.url = url;
  return log;
}

test("a log whose log_id is not the SHA-256 of its key is skipped, and said why", () => {
  const a = fixture("rfc6962", "https://ct.example.com/a/");
  const b = fixture("rfc6962", "https://ct.example.com/b/");
  const list = JSON.parse(logListJson([a]));
  list.operators[0].logs.push({ ...b.listEntry(), log_id: a.key.logId.toString("base64") });
  const parsed = parseLogList(JSON.stringify(list));
  expect(parsed.logs.map((log) => log.url)).toEqual(["https://ct.example.com/a/"]);
  expect(parsed.skipped).toEqual([{ log: "rfc6962 https://ct.example.com/b/", reason: "its log_id is not the SHA-256 of its key" }]);
});

test("a log URL carrying a query is not a log URL prefix: skipped, and said why", () => {
  const a = fixture("rfc6962", "https://ct.example.com/a/?token=1");
  const parsed = parseLogList(logListJson([a]));
  expect(parsed.logs).toEqual([]);
  expect(parsed.skipped).toEqual([{ log: "rfc6962 https://ct.example.com/a/?token=1", reason: "its url is not an http(s) URL" }]);
});

test("a log named twice in the list (two operators) is one log to follow", () => {
  const a = fixture("tiled", "https://mon.example.com/a/");
  const list = JSON.parse(logListJson([a]));
  list.operators.push({ ...list.operators[0], name: "mirror operator" });
  const parsed = parseLogList(JSON.stringify(list));
  expect(parsed.logs.map((log) => [log.kind, log.url])).toEqual([["tiled", "https://mon.example.com/a/"]]);
});
