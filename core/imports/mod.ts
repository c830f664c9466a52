/** Imports (CONTRACT §16): the background worker that judges each item as POST /v1/certificates would, and the view. */
export { ImportWorker, importLeaseMs, importTurnMs, type ImportWorkerOptions } from "./import_worker.ts";
export { presentImport } from "./present.ts";
