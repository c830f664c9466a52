/** How the libSQL executors name a database that refuses writes (in core's words) and a constraint violation. */
import { StorageUnavailableError } from "../../core/store/mod.ts";
import { ConstraintError } from "../sql/executor.ts";

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

/** A driver's error as both libSQL executors name it: a UNIQUE or PRIMARY KEY violation, a database refusing writes, or as it came. */
export function executorError(error: unknown): unknown {
  const text = `${(error as { code?: string })?.code ?? ""} ${(error as Error)?.message ?? ""}`;
  if (/UNIQUE constraint failed|PRIMARY KEY constraint|SQLITE_CONSTRAINT_(UNIQUE|PRIMARYKEY)/i.test(text)) {
    return new ConstraintError((error as Error).message);
  }
  return storageFailure(error) ?? error;
}
