/** Helpers shared by the certificate operations. */
import { CertkeeperError, quote } from "../base/errors.ts";
import { isId } from "../base/ids.ts";
import type { CertificateRecord, Scope } from "../base/records.ts";
import type { Services } from "./services.ts";

/** The certificate with this id in the caller's scope; another organization's is as missing as none. */
export async function findCertificate(services: Services, scope: Scope, id: string): Promise<CertificateRecord> {
  const record = isId("cert", id) ? await services.store.certificates.get(scope, id) : null;
  if (!record) throw certificateNotFound(id);
  return record;
}

export function certificateNotFound(id: string): CertkeeperError {
  return new CertkeeperError(
    "certificate_not_found",
    `No certificate with id ${quote(id)}: list your certificates with GET /v1/certificates.`,
  );
}
