/**
 * Run by test/imports.write_failure.test.ts as a process of its own: certkeeper embedded in a host
 * program (no top-level await, as adapters/embed is used), running an import whose first write of
 * outcomes fails once while another item is still being retrieved. Prints "still alive" when the
 * host survives it.
 */
import { createHarness } from "./harness.ts";

async function host() {
  const h = await createHarness({ store: "libsql" });
  const monitor = h.core.services.monitor as unknown as { inspect: (...args: unknown[]) => Promise<unknown> };
  const inspect = monitor.inspect.bind(monitor);
  monitor.inspect = async (...args: unknown[]) => {
    await Bun.sleep(300);
    return inspect(...args);
  };
  const imports = h.store.imports;
  const settle = imports.settle.bind(imports);
  let calls = 0;
  imports.settle = async (...args: Parameters<typeof settle>) => {
    if (calls++ === 0) throw new Error("SQLITE_BUSY: database is locked");
    return settle(...args);
  };
  const response = await h.request("POST", "/v1/imports", {
    body: { certificates: [{ domain: "not a domain" }, { domain: "slow.imports.certkeeper.test", port: 9 }] },
  });
  console.log("import", response.status);
  await h.core.services.imports!.loop.runDue();
  // The host goes on with its own work.
  for (let i = 0; i < 6; i++) {
    await Bun.sleep(250);
    console.log(`tick ${i}`);
  }
  console.log("still alive");
  await h.close();
}

void host();
