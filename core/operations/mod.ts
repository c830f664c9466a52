/** Every operation of the API, in documentation order. Adapters register routes from this list. */
import type { Operation } from "./_operation.ts";
import { addCertificate } from "./certificates_add.ts";
import { listCertificates } from "./certificates_list.ts";
import { getCertificate } from "./certificates_get.ts";
import { patchCertificate } from "./certificates_patch.ts";
import { deleteCertificate } from "./certificates_delete.ts";
import { checkCertificate } from "./certificates_check.ts";

export const OPERATIONS: readonly Operation[] = [
  addCertificate,
  listCertificates,
  getCertificate,
  patchCertificate,
  deleteCertificate,
  checkCertificate,
];

export type { Operation, OperationContext, OperationInput, OperationResult } from "./_operation.ts";
