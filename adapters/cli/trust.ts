/**
 * The trusted roots for the commands that connect to servers (check, certificate add, channel test,
 * import, serve), with an error naming CERTKEEPER_EXTRA_CA_FILE when its file cannot be used. Commands
 * that only read and write the database never load them.
 */
import { existsSync } from "node:fs";
import type { Config } from "../../core/config/mod.ts";
import { CertkeeperError } from "../../core/base/mod.ts";
import type { TrustStore } from "../../core/tls/mod.ts";

/** The system's roots and CERTKEEPER_EXTRA_CA_FILE's, or an error naming the variable. */
export async function loadTrust(config: Config): Promise<TrustStore> {
  const file = config.extraCaFile;
  if (file && !existsSync(file)) {
    throw new CertkeeperError("invalid_request", `CERTKEEPER_EXTRA_CA_FILE names "${file}", which does not exist: give the path of a PEM file of trusted root certificates, or unset it.`);
  }
  // Loaded here, not at the CLI's start: help and usage errors need no certificate parser.
  const { TrustStore } = await import("../../core/tls/mod.ts");
  try {
    return TrustStore.system(file);
  } catch (error) {
    throw new CertkeeperError("invalid_request", `CERTKEEPER_EXTRA_CA_FILE ("${file}") cannot be used: ${(error as Error).message}. Give a PEM file of trusted root certificates.`);
  }
}
