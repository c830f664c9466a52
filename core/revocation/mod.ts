/** core/revocation: is a certificate revoked? OCSP (stapled or asked) and CRLs, verified and cached. */
export {
  RevocationChecker,
  NOT_CHECKED,
  OCSP_MAX_BYTES,
  CRL_MAX_BYTES,
  cacheKey,
  fromAnswer,
  type RevocationCache,
  type RevocationCheckerOptions,
  type RevocationQuestion,
} from "./revocation_check.ts";
export { ocspRequest, verifyOcspResponse } from "./ocsp.ts";
export { verifyCrl } from "./crl.ts";
export { askAboutChain, LeafRevocation, type LeafRevocationQuestion } from "./leaf_revocation.ts";
export { RevocationFailure, type RevocationAnswer, type RevocationSource, type RevocationState } from "./revocation_answer.ts";
