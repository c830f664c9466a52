/**
 * Several processes on one database file: a write that waits out its busy time limit behind another
 * process's write lock fails as 503 `storage_unavailable` ("busy"), saying that nothing was changed,
 * never as a 500; and once the lock is let go, writes go through again.
 */
import { expect, test } from "bun:test";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { StorageUnavailableError } from "../core/store/mod.ts";
import { organizationRecord } from "./support/store_conformance/mod.ts";
import { temporaryDirectory } from "./support/temp.ts";

const dir = temporaryDirectory("certkeeper-file-busy-");

test("a write held past the busy time limit by another process's lock: storage_unavailable (busy), nothing written", async () => {
  const path = join(dir, "shared.db");
  const store = await openLibsqlStore({ url: `file:${path}`, busyTimeoutMs: 200 });
  const other = createClient({ url: `file:${path}` });
  const tx = await other.transaction("write");
  await tx.execute("CREATE TABLE IF NOT EXISTS held (x INTEGER)");
  const org = organizationRecord();
  try {
    const error = await store.organizations.create(org).then(
      () => null,
      (thrown) => thrown,
    );
    expect(error).toBeInstanceOf(StorageUnavailableError);
    expect({ code: error.code, status: error.status, reason: error.reason }).toEqual({ code: "storage_unavailable", status: 503, reason: "busy" });
    expect(error.message).toContain("nothing was changed");
  } finally {
    await tx.rollback();
    other.close();
  }
  expect(await store.organizations.get(org.id)).toBeNull();
  await store.organizations.create(org);
  expect(await store.organizations.get(org.id)).toMatchObject({ id: org.id });
  await store.close();
});
