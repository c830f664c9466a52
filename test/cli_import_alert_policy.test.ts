/**
 * The CLI's CSV import file carries the add body's `alertPolicy` (CONTRACT §18: a field of add, patch
 * and import items) in a column of its own; the server judges the value as POST /v1/certificates does.
 */
import { expect, test } from "bun:test";
import { parseImportFile } from "../adapters/cli/import_file.ts";

test("CSV import: an alertPolicy column is passed on as the item's alertPolicy", () => {
  const csv = "domain,protocol,alertPolicy\nshop.example,tls,days\nmail.example,smtp,renewal\n";
  expect(parseImportFile(csv)).toEqual([
    { line: 2, body: { domain: "shop.example", protocol: "tls", alertPolicy: "days" } },
    { line: 3, body: { domain: "mail.example", protocol: "smtp", alertPolicy: "renewal" } },
  ]);
});

test("CSV import: the alertPolicy column's value goes as written, for the server to judge", () => {
  expect(parseImportFile("domain,alertpolicy\nshop.example,weekly\n")).toEqual([{ line: 2, body: { domain: "shop.example", alertPolicy: "weekly" } }]);
});
