/** GET /v1/imports/{id}: progress, and every item's outcome once finished. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { isId } from "../base/ids.ts";
import { Import } from "../schemas/imports.ts";
import { Envelope, IdParams } from "../schemas/common.ts";
import { presentImport } from "../imports/present.ts";
import { defineOperation, NoQuery } from "./operation.ts";

export const getImport = defineOperation({
  id: "getImport",
  embed: "imports.get",
  method: "GET",
  path: "/v1/imports/:id",
  tag: "Imports",
  summary: "Get an import's progress and results",
  description: "`results` lists every item's outcome by index once `status` is finished.",
  access: "read",
  params: IdParams,
  query: NoQuery,
  status: 200,
  response: Envelope(Import),
  errors: ["import_not_found"],
  async handle({ principal, services }, { params }) {
    const id = params.id!;
    const record = isId("imp", id) ? await services.store.imports.get(principal.scope, id) : null;
    if (!record) {
      throw new CertkeeperError("import_not_found", `No import with id ${quote(id)}: the id is the one POST /v1/imports answered.`);
    }
    const results = record.status === "finished" ? await services.store.imports.results(record.id) : undefined;
    return { data: presentImport(record, results) };
  },
});
