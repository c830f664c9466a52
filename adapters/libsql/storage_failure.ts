/** How the libSQL executors name a database that refuses writes, in core's words. */
import { StorageUnavailableError } from "../../core/store/mod.ts";

/**
 * The database refusing writes, as core names it: SQLITE_FULL (the disk, or a size limit, is full)
 * and SQLITE_READONLY (a read-only file, folder or mount), by code locally or in a server's message.
 */
export function storageFailure(error: unknown): StorageUnavailableError | null {
  if (error instanceof StorageUnavailableError) return error;
  const text = `${(error as { code?: string })?.code ?? ""} ${(error as Error)?.message ?? ""}`;
  if (/SQLITE_FULL|database or disk is full/i.test(text)) return new StorageUnavailableError("full", { cause: error });
  if (/SQLITE_READONLY|readonly database|read-only file ?system/i.test(text)) return new StorageUnavailableError("read_only", { cause: error });
  return null;
}
