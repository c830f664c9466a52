/**
 * The README's first run, as a user pastes it: its shell blocks run in bash against a real server
 * process, with no `bun` on PATH (only what `npm install` gives: `npm run` finds the project's own).
 * Three things differ from a user's machine, and only those: the server's port (a free one, not
 * 3000), the database file (a temporary one), and example.com, which resolves to a local TLS server
 * presenting a certificate for example.com from the test PKI (the test cannot use the network).
 * When a step fails, the walkthrough stops there with the server's own error: never a stack trace,
 * never a later step run with an empty variable.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { chainPem, createLeaf } from "./support/pki.ts";
import { refusedPort, startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki } from "./support/harness.ts";
import { logLinesOf, messagesOf, startServe, type ServeProcess } from "./support/cli.ts";
import { temporaryDirectory } from "./support/temp.ts";

setDefaultTimeout(90_000);

const ROOT = resolve(import.meta.dir, "..");
const dir = temporaryDirectory("certkeeper-readme-");
let tls: TlsTestServer;
let local: TlsTestServer;
let server: ServeProcess;
let env: Record<string, string>;

beforeAll(async () => {
  const { rsaIntermediate, root } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["example.com", "www.example.com"] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  const appLeaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["app.internal"] });
  local = await startTlsServer({ cert: chainPem(appLeaf, rsaIntermediate), key: appLeaf.keyPem });
  writeFileSync(join(dir, "root.pem"), root.certPem);
  env = {
    CERTKEEPER_DATABASE_URL: `file:${join(dir, "certkeeper.db")}`,
    CERTKEEPER_RESOLVE: "example.com=127.0.0.1",
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(dir, "root.pem"),
    // example.com and app.internal live in no DNS this test may ask: no CAA, DANE or MTA-STS lookups.
    CERTKEEPER_DNS_SERVERS: "off",
  };
  server = await startServe({ env, cwd: dir });
});

afterAll(async () => {
  await server?.stop();
  await Promise.all([tls?.close(), local?.close()]);
});

/** The README's ```sh blocks, in order. */
function shellBlocks(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

/** The parent's environment without CERTKEEPER_* and without any folder holding a `bun` on PATH. */
function userEnv(extra: Record<string, string>): Record<string, string> {
  const base: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("CERTKEEPER_")) base[name] = value;
  base.PATH = (process.env.PATH ?? "").split(":").filter((folder) => !folder.includes("node_modules") && !folder.includes(".bun")).join(":");
  return { ...base, ...extra };
}

/** Runs `script` in bash as pasted into an interactive shell: no -e, no pipefail. */
async function paste(script: string, extraEnv: Record<string, string> = env) {
  const child = Bun.spawn(["bash", "-c", script], { cwd: ROOT, env: userEnv(extraEnv), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

function walkthrough(replacements: Array<[string, string]> = [], email = `you-${crypto.randomUUID()}@acme.example`): string {
  const blocks = shellBlocks();
  const first = blocks.find((block) => block.includes("org create"))!;
  const channel = blocks.find((block) => block.includes("/v1/channels"))!;
  expect(first).toBeDefined();
  expect(channel).toBeDefined();
  // Each test pastes into the same database: one owner email each, unless it pastes twice on purpose.
  let script = [first, channel].join("\n").replaceAll("you@acme.example", email);
  for (const [from, to] of replacements) {
    expect(script).toContain(from);
    script = script.replaceAll(from, to);
  }
  return `${script}\necho "CERT=$CERT KEY=$KEY"`;
}

describe("the README's first run", () => {
  test("works when pasted into a shell with no bun on PATH", async () => {
    expect((await paste("command -v bun || echo none")).stdout.trim()).toBe("none");
    const port = new URL(server.url).port;
    // The only changes: this server's port, and the port of the local TLS server standing in for example.com:443.
    const script = walkthrough([
      ["127.0.0.1:3000", `127.0.0.1:${port}`],
      ['{"domain": "example.com"}', `{"domain": "example.com", "port": ${tls.port}}`],
    ]);
    const { stdout, stderr, code } = await paste(script);
    // Each account change is logged on stderr (JSON lines, stderr being no terminal here): the first key by its id only.
    const logged = logLinesOf(stderr);
    expect(logged.map((line) => line.msg)).toEqual(["organization created", "user created", "API key created"]);
    expect(JSON.stringify(logged)).not.toContain("ck_live_");
    expect({ code, stderr: messagesOf(stderr) }).toEqual({ code: 0, stderr: expect.stringMatching(/^Organization org_\w+, owner usr_\w+, API key ck_live_\w+\n$/) });
    const lines = stdout.trim().split("\n");
    // get, delete, channel test: three JSON documents, then the variables.
    expect(lines).toHaveLength(4);
    const [got, deleted, tested] = lines.slice(0, 3).map((line) => JSON.parse(line));
    const { CERT, KEY } = Object.fromEntries(lines.at(-1)!.split(" ").map((pair) => pair.split("=")));
    expect(KEY).toMatch(/^ck_live_[0-9A-Za-z]{38}$/);
    expect(got).toMatchObject({ id: CERT, domain: "example.com", status: "valid", subject: "example.com" });
    expect(deleted).toEqual({ id: CERT, deleted: true });
    expect(tested).toMatchObject({ status: "delivered", error: null });
  });

  test("stops at a failed add with the server's own error: no stack trace, no get or delete with an empty id", async () => {
    const port = new URL(server.url).port;
    const closed = await refusedPort();
    const script = walkthrough([
      ["127.0.0.1:3000", `127.0.0.1:${port}`],
      ['{"domain": "example.com"}', `{"domain": "example.com", "port": ${closed}}`],
    ]);
    const { stdout, stderr } = await paste(script);
    expect(stderr).toContain(`Error certificate_not_found: No TLS certificate could be retrieved from "example.com:${closed}"`);
    expect(stderr).not.toMatch(/TypeError|SyntaxError|\n\s+at /);
    expect(stderr).not.toContain("method_not_allowed");
    const lines = stdout.trim().split("\n");
    // Only the channel block, which does not need $CERT, went on; then the variables.
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ status: "delivered" });
    expect(lines[1]).toMatch(/^CERT= KEY=ck_live_/);
  });

  test("pasted a second time after a failed step (the natural thing to do), it reuses the organization and owner and goes on", async () => {
    const port = new URL(server.url).port;
    const email = `twice-${crypto.randomUUID()}@acme.example`;
    const closed = await refusedPort();
    const ids = (stderr: string) => /Organization (org_\w+), owner (usr_\w+), API key ck_live_\w+/.exec(stderr)?.slice(1);
    // The first paste fails at example.com (here: a closed port), after making the organization and owner.
    const failed = await paste(walkthrough([["127.0.0.1:3000", `127.0.0.1:${port}`], ['{"domain": "example.com"}', `{"domain": "example.com", "port": ${closed}}`]], email));
    expect(failed.stderr).toContain("Error certificate_not_found");
    const first = ids(failed.stderr);
    expect(first).toBeDefined();
    // Fixed, the block is pasted again as it is: the same organization and owner, a new key, and it goes through.
    const again = await paste(walkthrough([["127.0.0.1:3000", `127.0.0.1:${port}`], ['{"domain": "example.com"}', `{"domain": "example.com", "port": ${tls.port}}`]], email));
    expect({ code: again.code, stderr: messagesOf(again.stderr).replace(/API key ck_live_\w+/, "API key …") }).toEqual({
      code: 0,
      stderr: `Organization ${first![0]}, owner ${first![1]}, API key …\n`,
    });
    expect(again.stdout.trim().split("\n")).toHaveLength(4);
  });

  test("stops at the first request when the server is not running, with curl's reason", async () => {
    const closed = await refusedPort();
    const script = walkthrough([["127.0.0.1:3000", `127.0.0.1:${closed}`]]);
    const { stdout, stderr } = await paste(script);
    expect(stderr).toContain(`curl: (7) Failed to connect to 127.0.0.1 port ${closed}`);
    expect(stderr).not.toMatch(/TypeError|SyntaxError|\n\s+at /);
    expect(stdout.trim().split("\n")).toEqual([expect.stringMatching(/^CERT= KEY=ck_live_/)]);
  });

  test("stops at a failed CLI step with the CLI's one-line error, and runs nothing with an empty key", async () => {
    const port = new URL(server.url).port;
    // A database the CLI cannot create: its folder would have to be inside a file.
    const script = walkthrough([["127.0.0.1:3000", `127.0.0.1:${port}`]]);
    const { stdout, stderr } = await paste(script, { ...env, CERTKEEPER_DATABASE_URL: `file:${join(dir, "root.pem")}/db/x.db` });
    expect(stderr).toMatch(/^Error: /);
    expect(stderr).not.toMatch(/TypeError|SyntaxError|\n\s+at /);
    // The certificate steps then meet the server's refusal of an empty key, and say so.
    expect(stderr).toContain("Error missing_api_key:");
    expect(stdout.trim().split("\n")).toEqual(["CERT= KEY="]);
  });
});

test("the README's local-server recipe checks a server on this machine and exits 0", async () => {
  const recipe = shellBlocks().find((block) => block.includes("check app.internal"))!;
  expect(recipe).toBeDefined();
  const script = recipe.replace("./my-ca.pem", join(dir, "root.pem")).replace("app.internal:8443", `app.internal:${local.port}`);
  const { stdout, stderr, code } = await paste(script, {});
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  expect(stdout).toMatch(new RegExp(`^valid  \\d+ days  -  app\\.internal:${local.port}\\n$`));
});

describe("the README and docs/ as a reader finds them", () => {
  const documents = () => [
    "README.md",
    ...readdirSync(join(ROOT, "docs"))
      .filter((name) => name.endsWith(".md"))
      .map((name) => `docs/${name}`),
  ];

  test("the README reads in five minutes: at most 200 lines, the rest in docs/", () => {
    const lines = readFileSync(join(ROOT, "README.md"), "utf8").trimEnd().split("\n");
    expect(lines.length).toBeLessThanOrEqual(200);
  });

  test("they name no document or process outside the repository", () => {
    const internal = /CONTRACT|SPEC\.md|§\s*\d|\bissue \d+/i;
    const found = documents().flatMap((path) =>
      readFileSync(join(ROOT, path), "utf8")
        .split("\n")
        .map((line, i) => ({ at: `${path}:${i + 1}`, line }))
        .filter(({ line }) => internal.test(line)),
    );
    expect(found).toEqual([]);
  });

  test("every link to a file of the repository leads to one", () => {
    const broken = documents().flatMap((path) =>
      [...readFileSync(join(ROOT, path), "utf8").matchAll(/\]\(([^)\s]+)\)/g)]
        .map((match) => match[1]!.split("#")[0]!)
        .filter((target) => target !== "" && !/^[a-z]+:/.test(target))
        .filter((target) => !existsSync(resolve(ROOT, dirname(path), target)))
        .map((target) => `${path} → ${target}`),
    );
    expect(broken).toEqual([]);
  });
});
