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

/**
 * `npm start` on a free port, once it says it listens there. The port is free when asked, but another
 * test file's server may take it before this one binds (the suite runs files side by side): then
 * another port is tried.
 */
async function npmStart(env: Record<string, string>) {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const npm = Bun.spawn(["npm", "start", "--silent"], {
      cwd: ROOT,
      env: { ...process.env, ...env, CERTKEEPER_HOST: "127.0.0.1", CERTKEEPER_PORT: String(port) },
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
    });
    started.push(npm);
    const out = { stdout: "", stderr: "" };
    for (const name of ["stdout", "stderr"] as const) {
      void (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of npm[name]) out[name] += decoder.decode(chunk, { stream: true });
      })();
    }
    let exited = false;
    void npm.exited.then(() => (exited = true));
    const deadline = Date.now() + 20_000;
    while (!out.stdout.includes('"certkeeper is listening"') && !exited && Date.now() < deadline) await Bun.sleep(50);
    if (exited && /in use by another process/.test(out.stderr) && attempt < 3) continue;
    return { npm, url: `http://127.0.0.1:${port}`, out };
  }
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  test(`${signal} to the npm process of \`npm start\` stops the server cleanly`, async () => {
    const ws = workspace();
    const { npm, url, out } = await npmStart(ws.env);
    expect(out.stdout).toContain('"certkeeper is listening"');
    expect(await answers(url)).toBe(true);
    npm.kill(signal);
    await npm.exited;
    // The server is gone with it, having stopped as it does: no process left answering on the port.
    const gone = Date.now() + 10_000;
    while (((await answers(url)) || !out.stdout.includes('"certkeeper stopped"')) && Date.now() < gone) await Bun.sleep(100);
    expect(await answers(url)).toBe(false);
    expect(out.stdout).toContain('"certkeeper stopped"');
  }, 60_000);
}
