/**
 * The address `serve` prints is one to open (docs/settings.md: "the address the server printed"), also
 * when CERTKEEPER_HOST is an IPv6 address (docs/configuration.md): `http://[::1]:PORT`, in brackets as
 * a URL writes it (it printed `http://::1:PORT`, which no browser or client opens).
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { CLI_MAIN, freePort, workspacesRemovedAfterAll } from "./support/cli.ts";

setDefaultTimeout(30_000);
const workspace = workspacesRemovedAfterAll();

async function serveUntilListening(host: string): Promise<{ lines: any[]; stop: () => Promise<void> }> {
  const ws = workspace();
  const port = await freePort();
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("CERTKEEPER_")) env[name] = value;
  const child = Bun.spawn([process.execPath, CLI_MAIN, "serve"], {
    cwd: ws.dir,
    env: { ...env, ...ws.env, CERTKEEPER_HOST: host, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_FORMAT: "json" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let text = "";
  const decoder = new TextDecoder();
  const reader = child.stdout.getReader();
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline && !text.includes('"signIn"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  reader.releaseLock();
  const lines = text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l));
  return {
    lines,
    stop: async () => {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

describe("the address the server prints can be opened", () => {
  test("CERTKEEPER_HOST=::1: the printed url and sign-in address are URLs that reach the server", async () => {
    const served = await serveUntilListening("::1");
    try {
      const listening = served.lines.find((l) => l.msg === "certkeeper is listening");
      const firstStart = served.lines.find((l) => typeof l.signIn === "string");
      expect(listening).toBeDefined();
      expect(firstStart).toBeDefined();
      // As printed: a URL a browser (or curl, or fetch) can open.
      expect(() => new URL(listening.url)).not.toThrow();
      expect(() => new URL(firstStart.signIn)).not.toThrow();
      const health = await fetch(`${listening.url}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      await served.stop();
    }
  });
});
