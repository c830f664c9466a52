/** POST /v1/imports: store the items as sent and answer 202; the import worker judges them. */
import { CertkeeperError } from "../base/errors.ts";
import { newId } from "../base/ids.ts";
import { FINISHED_IMPORTS_KEPT, Import, ImportBody, MAX_IMPORT_BODY_BYTES, MAX_IMPORT_ITEMS, MAX_RUNNING_IMPORTS, RUNNING_IMPORTS_RETRY_SECONDS } from "../schemas/imports.ts";
import { Envelope } from "../schemas/common.ts";
import type { ImportRecord } from "../base/records.ts";
import { presentImport } from "../imports/present.ts";
import { defineOperation, NoQuery } from "./operation.ts";

/**
 * The body must be an object with exactly a `certificates` array of 1–10,000 objects; anything else
 * creates nothing. What is inside each object is the worker's to judge, item by item, as POST would.
 */
function parseImport(raw: unknown): string[] {
  const refuse = (why: string) => new CertkeeperError("invalid_request", `${why}: send {"certificates": [{"domain": "example.com"}, …]}.`);
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) throw refuse("The request body must be a JSON object");
  for (const key of Object.keys(raw)) {
    if (key !== "certificates") throw refuse(`Unknown field ${JSON.stringify(key)}: the only field is "certificates"`);
  }
  const items = (raw as { certificates?: unknown }).certificates;
  if (items === undefined) throw refuse('Field "certificates" is required');
  if (!Array.isArray(items)) throw refuse('Field "certificates" must be an array');
  if (items.length === 0 || items.length > MAX_IMPORT_ITEMS) {
    throw refuse(`Field "certificates" must hold 1 to ${MAX_IMPORT_ITEMS.toLocaleString("en")} items; got ${items.length.toLocaleString("en")}`);
  }
  return items.map((item, index) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) {
      throw refuse(`Field "certificates[${index}]" must be an object such as {"domain": "example.com"}`);
    }
    return JSON.stringify(item);
  });
}

export const createImport = defineOperation({
  id: "createImport",
  embed: "imports.create",
  method: "POST",
  path: "/v1/imports",
  tag: "Imports",
  summary: "Import many certificates at once",
  description:
    "Answers 202 at once; GET /v1/imports/{id} shows progress and, once finished, each item's outcome. Each item is " +
    "judged exactly as POST /v1/certificates would judge it (validation, duplicates, plan limits in item order, " +
    "retrieval), with at most CERTKEEPER_CHECK_CONCURRENCY retrievals at once. Bodies up to 2 MiB. An import survives " +
    "a restart of the server and finishes; no certificate is created twice. An organization keeps its last " +
    `${FINISHED_IMPORTS_KEPT} finished imports in each mode (an older one is 404 import_not_found) and runs at most ${MAX_RUNNING_IMPORTS} at once in each: ` +
    "one more is 429 rate_limit_exceeded, with Retry-After, until one has finished.",
  access: "write",
  query: NoQuery,
  body: ImportBody,
  parseBody: parseImport,
  maxBodyBytes: MAX_IMPORT_BODY_BYTES,
  // The body's object and its array around items each read as deep as POST's body: an item POST
  // reads fails alone with POST's error, not the whole import.
  bodyWrapLevels: 2,
  status: 202,
  response: Envelope(Import),
  errors: ["permission_denied", "payload_too_large", "unsupported_media_type"],
  example: { request: { certificates: [{ domain: "example.com", tags: ["team:web"] }, { domain: "shop.example.com", port: 8443 }] } },
  async handle({ principal, services, host }, { body }) {
    const items = body as string[];
    const now = services.clock.now();
    const record: ImportRecord = {
      ...principal.scope,
      id: newId("imp"),
      certificateLimit: principal.limits.certificates,
      status: "running",
      total: items.length,
      processed: 0,
      created: 0,
      failed: 0,
      createdAt: now,
      finishedAt: null,
    };
    const { imports } = services.store;
    // What one organization's finished imports keep is bounded: its last ones in this mode, with their
    // items. Trimmed first, so that a failure here creates nothing (a retry makes no second import).
    await imports.trim(principal.scope, FINISHED_IMPORTS_KEPT);
    // The operator's own imports (the CLI's, an embedding program's) are not held: a CLI import stopped
    // ten times must not keep the next one, which finishes them all, from starting.
    if (!(await imports.create(record, items, host ? Infinity : MAX_RUNNING_IMPORTS))) {
      throw new CertkeeperError(
        "rate_limit_exceeded",
        `This organization already has ${MAX_RUNNING_IMPORTS} ${principal.scope.mode} imports running: retry once one has finished (GET /v1/imports/{id} shows their progress).`,
        // As every 429 (CONTRACT §8): nothing more now, and when to ask again.
        { headers: { "retry-after": String(RUNNING_IMPORTS_RETRY_SECONDS), "x-ratelimit-remaining": "0" } },
      );
    }
    services.imports?.poke();
    return { data: presentImport(record) };
  },
});
