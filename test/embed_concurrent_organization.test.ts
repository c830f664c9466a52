/**
 * Two certkeepers created at the same time over one Store the host passes act for one organization
 * (the database's only one, or the one named), as the option's docs say: they do not each find none
 * and create one.
 */
import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "certkeeper";
import { createCertkeeper, type CertkeeperOptions } from "certkeeper/embed";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { createMemoryStore } from "../adapters/memory/mod.ts";

const config = { dnsServers: "off" as const };

for (const kind of ["libsql", "memory"] as const) {
  for (const organization of [undefined, { name: "Acme" }] as CertkeeperOptions["organization"][]) {
    test(`two certkeepers created together over one ${kind} Store act for one organization (${organization ? "by name" : "the default"})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), "certkeeper-embed-org-"));
      const store = kind === "libsql" ? await openLibsqlStore({ url: `file:${join(dir, "host.db")}` }) : createMemoryStore();
      try {
        const options: CertkeeperOptions = { database: store, config, logger: silentLogger, organization };
        const [a, b] = await Promise.all([createCertkeeper(options), createCertkeeper(options)]);
        await Promise.all([a.close(), b.close()]);
        const organizations = await store.organizations.list();
        expect({ a: a.organization.id, b: b.organization.id, organizations: organizations.length }).toEqual({
          a: b.organization.id,
          b: a.organization.id,
          organizations: 1,
        });
        // And the next certkeeper over that database opens, as the documentation says it does.
        const later = await createCertkeeper(options);
        await later.close();
        expect(later.organization.id).toBe(a.organization.id);
      } finally {
        await store.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
}
