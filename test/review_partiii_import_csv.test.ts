/**
 * Review (CONTRACT Part III intro, §18): `alertPolicy` is a field of "add, patch, import items" and is
 * "accepted wherever its kind is". The CLI's CSV import file carries the add body's options (name,
 * tags, protocol: Part I and II fields), but a column for the alert policy is refused.
 */
import { expect, test } from "bun:test";
import { parseImportFile } from "../adapters/cli/import_file.ts";

test("CSV import: an alertPolicy column is accepted and passed on as the item's alertPolicy", () => {
  const csv = "domain,protocol,alertPolicy\nshop.example,tls,days\nmail.example,smtp,renewal\n";
  expect(parseImportFile(csv)).toEqual([
    { line: 2, body: { domain: "shop.example", protocol: "tls", alertPolicy: "days" } },
    { line: 3, body: { domain: "mail.example", protocol: "smtp", alertPolicy: "renewal" } },
  ]);
});
