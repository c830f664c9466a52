/**
 * `ck.config` is "the configuration in effect": its databaseUrl names the database the `database`
 * option opened.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "certkeeper";
import { createCertkeeper } from "certkeeper/embed";

test("ck.config.databaseUrl is the database the `database` option opened", async () => {
  const dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-dburl-"));
  const database = `file:${join(dir, "host.db")}`;
  const ck = await createCertkeeper({ database, logger: silentLogger, config: { dnsServers: "off" } });
  try {
    expect(ck.config.databaseUrl).toBe(database);
  } finally {
    await ck.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
