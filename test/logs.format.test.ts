/**
 * Log formats (CONTRACT §17): readable lines when stdout is a terminal, JSON lines otherwise,
 * CERTKEEPER_LOG_FORMAT=json|pretty to choose; the first-start instructions readable and
 * copy-pasteable in both. Real `certkeeper serve` processes; the terminal is a real pseudo-terminal
 * made by util-linux's `script`.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { resolve } from "node:path";
import { CLI_MAIN, freePort, messagesOf, startServe, workspacesRemovedAfterAll } from "./support/cli.ts";
import { WebClient } from "./support/web_client.ts";
import { createLogger } from "../core/base/log.ts";

setDefaultTimeout(60_000);

const ROOT = resolve(import.meta.dir, "..");
const workspace = workspacesRemovedAfterAll();
const PASSWORD = "First-0wner-passw0rd";

/** The parent's environment without CERTKEEPER_* variables and without any bun on PATH but the project's. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("CERTKEEPER_")) env[name] = value;
  return { ...env, ...extra };
}

async function run(argv: string[], env: Record<string, string>, stdin?: string) {
  const child = Bun.spawn(argv, { cwd: ROOT, env, stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

describe("the first start's instructions", () => {
  test("as JSON (stdout not a terminal): one entry whose commands field holds the commands, which work when pasted", async () => {
    const ws = workspace();
    const serve = await startServe({ env: { ...ws.env, CERTKEEPER_LOG_LEVEL: "info" }, cwd: ws.dir });
    let stdout: string;
    try {
      await Bun.sleep(200);
      stdout = serve.output().stdout;
      const entries = stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line));
      const first = entries.find((e) => Array.isArray(e.commands))!;
      const { level, msg, signIn } = first;
      expect({ level, signIn }).toEqual({ level: "info", signIn: `${serve.url}/sign-in` });
      expect(msg).toContain("database is empty");
      // Short and free of escaped quotes: the commands are data, not a 400-character sentence.
      expect(msg.length).toBeLessThan(120);
      expect(JSON.stringify(first.commands)).not.toContain('\\"');
      // The server's database (not the default one) is part of the commands; the organization is named.
      const database = `CERTKEEPER_DATABASE_URL='file:${ws.databasePath}'`;
      expect(first.commands).toEqual([
        `${database} npm run --silent certkeeper -- org create --name 'My org'`,
        `${database} npm run --silent certkeeper -- user create --org 'My org' --email you@example.com --role owner --password -`,
      ]);

      // Pasted into a shell as printed (the password typed on stdin), without the server's variables: the owner can sign in.
      const env = cleanEnv({ PATH: process.env.PATH!.split(":").filter((dir) => !dir.includes("node_modules")).join(":") });
      const org = await run(["bash", "-c", first.commands[0]], env);
      expect({ code: org.code, stderr: messagesOf(org.stderr) }).toEqual({ code: 0, stderr: "" });
      const user = await run(["bash", "-c", first.commands[1]], env, `${PASSWORD}\n`);
      expect({ code: user.code, stderr: messagesOf(user.stderr) }).toEqual({ code: 0, stderr: "" });
      const browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
      expect((await browser.signIn("you@example.com", PASSWORD)).status).toBe(303);
    } finally {
      await serve.stop();
    }
  });

  test("with CERTKEEPER_LOG_FORMAT=pretty: a block with each command on its own line, no JSON", async () => {
    const ws = workspace();
    const serve = await startServe({ env: { ...ws.env, CERTKEEPER_LOG_LEVEL: "info", CERTKEEPER_LOG_FORMAT: "pretty" }, cwd: ws.dir });
    await fetch(`${serve.url}/v1/certificates`);
    expect(await serve.stop()).toBe(0);
    const { stdout } = serve.output();
    const lines = stdout.split("\n");
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d INFO  certkeeper is listening  url=http:\/\/127\.0\.0\.1:\d+ database=file:/);
    const database = `CERTKEEPER_DATABASE_URL='file:${ws.databasePath}'`;
    expect(lines).toContain(`    ${database} npm run --silent certkeeper -- org create --name 'My org'`);
    expect(lines).toContain(`    ${database} npm run --silent certkeeper -- user create --org 'My org' --email you@example.com --role owner --password -`);
    expect(lines).toContain(`  signIn: ${serve.url}/sign-in`);
    expect(stdout).toMatch(/\n\d\d:\d\d:\d\d INFO  request .*method=GET path=\/v1\/certificates status=401/);
    expect(stdout).toMatch(/\n\d\d:\d\d:\d\d INFO  certkeeper stopped\n$/);
    expect(stdout).not.toContain('{"');
  });
});

describe("the format follows stdout", () => {
  async function serveOnce(env: Record<string, string>, viaTerminal: boolean) {
    const port = await freePort();
    const ws = workspace();
    const full = cleanEnv({ ...ws.env, CERTKEEPER_PORT: String(port), CERTKEEPER_LOG_LEVEL: "info", ...env });
    const command = `${process.execPath} ${CLI_MAIN} serve`;
    // `script` gives the server a pseudo-terminal as stdout. Once the server says it listens, `timeout`
    // is sent SIGTERM, which it passes on to its command: a stop as an operator's, however long a loaded
    // machine took to start the server (and after 30 s whatever happened).
    const argv = viaTerminal ? ["timeout", "-s", "TERM", "30", "script", "-qec", command, "/dev/null"] : ["timeout", "-s", "TERM", "30", ...command.split(" ")];
    const child = Bun.spawn(argv, { cwd: ROOT, env: full, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const read = async (stream: ReadableStream<Uint8Array>, onText: (text: string) => void) => {
      const decoder = new TextDecoder();
      let text = "";
      for await (const chunk of stream) onText((text += decoder.decode(chunk, { stream: true })));
      return text;
    };
    let stopping = false;
    const [stdout, stderr, code] = await Promise.all([
      read(child.stdout, (text) => {
        if (stopping || !text.includes("certkeeper is listening")) return;
        stopping = true;
        setTimeout(() => child.kill("SIGTERM"), 300);
      }),
      read(child.stderr, () => {}),
      child.exited,
    ]);
    return { stdout, stderr, code };
  }

  test("a terminal gets readable lines; a pipe gets JSON lines; CERTKEEPER_LOG_FORMAT=json overrides the terminal", async () => {
    const [terminal, pipe, forcedJson] = await Promise.all([serveOnce({}, true), serveOnce({}, false), serveOnce({ CERTKEEPER_LOG_FORMAT: "json" }, true)]);
    expect(terminal.stdout).toMatch(/^\d\d:\d\d:\d\d INFO  certkeeper is listening/);
    expect(terminal.stdout).toContain(" npm run --silent certkeeper -- org create --name 'My org'");
    const pipeLines = pipe.stdout.split("\n").filter(Boolean);
    expect(pipeLines.length).toBeGreaterThan(1);
    for (const line of pipeLines) expect(JSON.parse(line)).toMatchObject({ time: expect.any(String), level: "info", msg: expect.any(String) });
    const forced = forcedJson.stdout.split(/\r?\n/).filter(Boolean);
    expect(JSON.parse(forced[0]!)).toMatchObject({ msg: "certkeeper is listening" });
  });

  test("a log format that does not exist is refused at start, naming the variable", async () => {
    const result = await serveOnce({ CERTKEEPER_LOG_FORMAT: "yaml" }, false);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("CERTKEEPER_LOG_FORMAT");
    expect(result.stdout).toBe("");
  });
});

describe("readable logs keep §10's secrets out", () => {
  test("a pretty-format server shows no password, key, metrics token, signing secret or header value", async () => {
    const ws = workspace();
    const metricsToken = "metr1cs-t0ken-n0t-for-pretty-logs";
    const headerValue = "header-value-n0t-for-pretty-logs";
    const env = { ...ws.env, CERTKEEPER_LOG_LEVEL: "debug", CERTKEEPER_LOG_FORMAT: "pretty", CERTKEEPER_METRICS_TOKEN: metricsToken, CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true" };
    const org = JSON.parse((await run([process.execPath, CLI_MAIN, "org", "create", "--name", "Pretty", "--json"], cleanEnv(env))).stdout);
    const user = JSON.parse((await run([process.execPath, CLI_MAIN, "user", "create", "--org", org.id, "--email", "p@pretty.test", "--role", "owner", "--password", PASSWORD, "--json"], cleanEnv(env))).stdout);
    const key = JSON.parse((await run([process.execPath, CLI_MAIN, "key", "create", "--user", user.id, "--name", "k", "--json"], cleanEnv(env))).stdout).key;
    const serve = await startServe({ env, cwd: ws.dir });
    const browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
    expect((await browser.signIn("p@pretty.test", "Wr0ng-passw0rd-here")).status).toBe(401);
    expect((await browser.signIn("p@pretty.test", PASSWORD)).status).toBe(303);
    const hook = await fetch(`${serve.url}/v1/channels`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ type: "webhook", name: "Hook", config: { url: "http://127.0.0.1:9/hook", headers: { "X-Secret": headerValue } } }),
    }).then((r) => r.json() as any);
    await fetch(`${serve.url}/v1/channels/${hook.data.id}/test`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
    await fetch(`${serve.url}/v1/certificates`, { headers: { authorization: `Bearer ${key.slice(0, -1)}x` } });
    await fetch(`${serve.url}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } });
    expect(await serve.stop()).toBe(0);
    const { stdout, stderr } = serve.output();
    expect(stdout).toContain("request");
    const secrets = { password: PASSWORD, key, keyBody: key.slice(8), metricsToken, headerValue, signingSecret: hook.data.config.signingSecret, cookie: [...browser.cookies.values()][0]! };
    expect(Object.entries(secrets).filter(([, secret]) => stdout.includes(secret) || stderr.includes(secret)).map(([name]) => name)).toEqual([]);
  });
});

describe("pretty lines and what callers typed", () => {
  test("a field holding escape sequences, C1 controls or order marks (a channel's name, a server's error) is shown, never acted on", () => {
    const lines: string[] = [];
    const logger = createLogger("info", { format: "pretty", write: (line) => lines.push(line) });
    logger.info("delivery failed", { channel: "ops\u001b[2J", error: "bad \u009b31m answer", name: "evil\u202etxt.exe" });
    logger.info("first start", { commands: ["run\u001b]0;title\u0007 this"], note: "then\u001b[1A over" });
    const text = lines.join("\n");
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(lines[0]).toContain('channel="ops\\u001b[2J"');
    expect(lines[0]).toContain('error="bad \\x9b31m answer"');
    expect(lines[0]).toContain('name="evil\\u202etxt.exe"');
    expect(lines[1]).toContain("    run\\x1b]0;title\\x07 this");
    expect(lines[1]).toContain("  note: then\\x1b[1A over");
  });
});
