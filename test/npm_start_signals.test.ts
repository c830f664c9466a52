/**
 * `npm start` is how the README runs the server, and how a service manager or a script stops it is a
 * signal to that npm process: npm passes SIGTERM and SIGINT on to the script it runs, so the script
 * must be the server itself, not a shell that would die and leave the server running, orphaned, on its
 * port and its database.
 */
import { afterAll, expect, test } from "bun:test";
import { resolve } from "node:path";
import { freePort, workspacesRemovedAfterAll } from "./support/cli.ts";

const workspace = workspacesRemovedAfterAll();
const ROOT = resolve(import.meta.dir, "..");
const started: Array<ReturnType<typeof Bun.spawn>> = [];
afterAll(() => {
  for (const child of started) child.kill("SIGKILL");
});

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) })).status === 200;
  } catch {
    return false;
  }
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} to the npm process of \`npm start\` stops the server cleanly`, async () => {
    const ws = workspace();
    const port = await freePort();
    const npm = Bun.spawn(["npm", "start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, ...ws.env, CERTKEEPER_HOST: "127.0.0.1", CERTKEEPER_PORT: String(port) },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    started.push(npm);
    let output = "";
    void (async () => {
      const decoder = new TextDecoder();
      for await (const chunk of npm.stdout) output += decoder.decode(chunk, { stream: true });
    })();
    const url = `http://127.0.0.1:${port}`;
    const deadline = Date.now() + 20_000;
    while (!(await answers(url)) && Date.now() < deadline) await Bun.sleep(100);
    expect(await answers(url)).toBe(true);
    npm.kill(signal);
    await npm.exited;
    // The server is gone with it, having stopped as it does: no process left answering on the port.
    const gone = Date.now() + 10_000;
    while (((await answers(url)) || !output.includes('"certkeeper stopped"')) && Date.now() < gone) await Bun.sleep(100);
    expect(await answers(url)).toBe(false);
    expect(output).toContain('"certkeeper stopped"');
  }, 40_000);
}
