/** An import as callers see it. */
import { iso } from "../base/time.ts";
import type { ImportItemResult, ImportRecord } from "../base/records.ts";
import type { ImportView } from "../schemas/imports.ts";

export function presentImport(record: ImportRecord, results?: ImportItemResult[]): ImportView {
  const view: ImportView = {
    id: record.id,
    status: record.status,
    total: record.total,
    processed: record.processed,
    created: record.created,
    failed: record.failed,
    createdAt: iso(record.createdAt),
    finishedAt: record.finishedAt === null ? null : iso(record.finishedAt),
  };
  if (results) view.results = results;
  return view;
}
