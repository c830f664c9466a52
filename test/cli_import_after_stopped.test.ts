/**
 * `certkeeper import` finishes what stopped imports left: "if this command is stopped, a running server
 * (or the next import) finishes it". An operator without a server (the CLI alone on the database) whose
 * last ten `import` commands were stopped (Ctrl-C) has ten imports left running; the next `import` runs
 * and finishes them with its own. The limit of 10 running imports an organization's API keys meet is
 * not the operator's: the CLI acts as the process itself.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { openLibsqlStore } from "../adapters/libsql/mod.ts";
import { OPERATIONS } from "../core/operations/mod.ts";
import { createHarness } from "./support/harness.ts";
import { runCli, tempWorkspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const ws = tempWorkspace("certkeeper-cli-import-stopped-");
afterAll(() => ws.cleanup());

test("ten `import` commands stopped before their end (no server): the next `import` still runs and finishes", async () => {
  // Ten imports created exactly as the CLI creates them (createImport, acting as the host), whose
  // command was then stopped: nothing works them (no server runs).
  const h = await createHarness({ store: await openLibsqlStore({ url: `file:${ws.databasePath}` }) });
  const createImport = OPERATIONS.find((op) => op.id === "createImport")!;
  const org = h.org;
  const caller = { kind: "host", principal: { keyId: "cli", userId: "cli", role: "owner", scope: { organizationId: org.id, mode: "live" }, limits: org.limits } } as const;
  const ids: string[] = [];
  for (let i = 0; i < 10; i++) {
    ids.push(((await h.core.call({ operation: createImport, caller, body: { certificates: [{ domain: `bad..domain${i}` }] } })).data as { id: string }).id);
  }
  await h.close();
  const running = async () => {
    const store = await openLibsqlStore({ url: `file:${ws.databasePath}` });
    try {
      const imports = await Promise.all(ids.map((id) => store.imports.get({ organizationId: org.id, mode: "live" }, id)));
      return imports.filter((record) => record?.status === "running").length;
    } finally {
      await store.close();
    }
  };
  expect(await running()).toBe(10);

  const file = join(ws.dir, "list.txt");
  writeFileSync(file, "bad..domain\n");
  const result = await runCli(["import", "--org", org.id, file], { env: ws.env });
  // The command works (its own import and the ten left behind), prints the line's failure and the summary.
  expect({ stderr: result.stderr.slice(0, 300), stdout: result.stdout }).toEqual({
    stderr: "",
    stdout: expect.stringMatching(/Import imp_\w+: 1 line, 0 created, 1 failed\./),
  });
  expect(result.code).toBe(1);
  expect(await running()).toBe(0);
});
