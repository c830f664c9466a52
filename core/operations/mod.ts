/** Every operation of the API, in documentation order. Adapters register routes from this list. */
import type { Operation } from "./operation.ts";
import { addCertificate } from "./certificates_add.ts";
import { listCertificates } from "./certificates_list.ts";
import { summarizeCertificates } from "./certificates_summary.ts";
import { getCertificate } from "./certificates_get.ts";
import { patchCertificate } from "./certificates_patch.ts";
import { deleteCertificate } from "./certificates_delete.ts";
import { checkCertificate } from "./certificates_check.ts";
import { addChannel } from "./channels_add.ts";
import { getChannel, listChannels } from "./channels_read.ts";
import { deleteChannel, patchChannel } from "./channels_write.ts";
import { testChannel } from "./channels_test_event.ts";
import { listEvents } from "./events_list.ts";
import { addWatch } from "./watches_add.ts";
import { getWatch, listWatches } from "./watches_read.ts";
import { deleteWatch, patchWatch, pollWatch } from "./watches_write.ts";
import { createImport } from "./imports_create.ts";
import { getImport } from "./imports_get.ts";

const operations = [
  addCertificate,
  listCertificates,
  summarizeCertificates,
  getCertificate,
  patchCertificate,
  deleteCertificate,
  checkCertificate,
  addChannel,
  listChannels,
  getChannel,
  patchChannel,
  deleteChannel,
  testChannel,
  listEvents,
  addWatch,
  listWatches,
  getWatch,
  patchWatch,
  deleteWatch,
  pollWatch,
  createImport,
  getImport,
] as const satisfies readonly Operation[];

export const OPERATIONS: readonly Operation[] = operations;

/** Every operation with its own literal id, tag and schema types (see defineOperation): what typed faces derive from. */
export type TypedOperation = (typeof operations)[number];

export { addCertificate };
export type { Operation, OperationContext, OperationInput, OperationResult } from "./operation.ts";
export type { Services } from "./services.ts";
