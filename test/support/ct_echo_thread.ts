/**
 * A stand-in CT reading thread for test/ct_thread_failures_and_defaults.test.ts: it keeps the watched domains
 * it is sent, as the real one does, and answers each read with the domains it holds (in place of a
 * chunk); a read of the URL "die" ends it (exit code 3), as a crash would.
 */
import { parentPort } from "node:worker_threads";

const port = parentPort!;
let held: { version: string; domains: string[] } = { version: "", domains: [] };

port.on("message", (message: { id: number; fetch: { url: string }; version: string; domains?: string[] }) => {
  if (message.fetch.url === "die") process.exit(3);
  if (message.domains) held = { version: message.version, domains: message.domains };
  if (held.version !== message.version) {
    port.postMessage({ id: message.id, failure: { kind: "other", message: `holds version "${held.version}", not "${message.version}"` } });
    return;
  }
  port.postMessage({ id: message.id, chunk: { held: held.domains } });
});
