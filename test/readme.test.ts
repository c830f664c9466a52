/**
 * The README's first run, as a user pastes it: its shell blocks run in bash against a real server
 * process. Three things differ from a user's machine, and only those: the server's port (a free one,
 * not 3000), the database file (a temporary one), and example.com, which resolves to a local TLS
 * server presenting a certificate for example.com from the test PKI (the test cannot use the network).
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chainPem, createLeaf } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki } from "./support/harness.ts";
import { startServe, type ServeProcess } from "./support/cli.ts";

setDefaultTimeout(60_000);

const ROOT = resolve(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "certkeeper-readme-"));
let tls: TlsTestServer;
let server: ServeProcess;
let env: Record<string, string>;

beforeAll(async () => {
  const { rsaIntermediate, root } = await testPki();
  const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: ["example.com", "www.example.com"] });
  tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
  writeFileSync(join(dir, "root.pem"), root.certPem);
  env = {
    CERTKEEPER_DATABASE_URL: `file:${join(dir, "certkeeper.db")}`,
    CERTKEEPER_RESOLVE: "example.com=127.0.0.1",
    CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true",
    CERTKEEPER_EXTRA_CA_FILE: join(dir, "root.pem"),
  };
  server = await startServe({ env, cwd: dir });
});

afterAll(async () => {
  await server?.stop();
  await tls?.close();
});

/** The README's ```sh blocks, in order. */
function shellBlocks(): string[] {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  return [...readme.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

test("the first-run walkthrough works when pasted into a shell", async () => {
  const blocks = shellBlocks();
  const walkthrough = blocks.find((block) => block.includes("org create"))!;
  const channel = blocks.find((block) => block.includes("/v1/channels"))!;
  expect(walkthrough).toBeDefined();
  const port = new URL(server.url).port;
  // The only changes: this server's port, and the port of the local TLS server standing in for example.com:443.
  const script = [walkthrough, channel]
    .join("\n")
    .replaceAll("127.0.0.1:3000", `127.0.0.1:${port}`)
    .replace('{"domain": "example.com"}', `{"domain": "example.com", "port": ${tls.port}}`);
  const child = Bun.spawn(["bash", "-euo", "pipefail", "-c", `${script}\necho "CERT=$CERT KEY=$KEY"`], {
    cwd: ROOT,
    env: { ...process.env, ...env, PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.PATH}` },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  const lines = stdout.trim().split("\n");
  // get, delete, channel test: three JSON documents, then the variables.
  const [got, deleted, tested] = lines.slice(0, 3).map((line) => JSON.parse(line));
  const { CERT, KEY } = Object.fromEntries(lines.at(-1)!.split(" ").map((pair) => pair.split("=")));
  expect(KEY).toMatch(/^ck_live_[0-9A-Za-z]{38}$/);
  expect(got.data).toMatchObject({ id: CERT, domain: "example.com", status: "valid", subject: "example.com" });
  expect(deleted.data).toEqual({ id: CERT, deleted: true });
  expect(tested.data).toMatchObject({ status: "delivered", error: null });
});
