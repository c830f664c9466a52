/**
 * What a newcomer met on the first day (issue 32), each against the real thing: day counts that agree
 * everywhere (email, dashboard, certificate page, CLI), first-start hints that carry the database in
 * use and work as printed, a `.env` file read by the CLI and the server (Bun loads it), and a port in
 * use named by its variable.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import net from "node:net";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import PostalMime from "postal-mime";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { logLinesOf, messagesOf, runCli, runCliJson, startServe, workspacesRemovedAfterAll, type ServeProcess } from "./support/cli.ts";
import { WebClient } from "./support/web_client.ts";

setDefaultTimeout(90_000);

const ROOT = resolve(import.meta.dir, "..");
const workspace = workspacesRemovedAfterAll();
const PASSWORD = "newcomer passw0rd one";

describe("day counts agree everywhere", () => {
  const domain = `old.days.${TEST_DOMAIN}`;
  let ws: ReturnType<typeof workspace>;
  let serve: ServeProcess;
  let tls: TlsTestServer;
  let certificateId: string;

  beforeAll(async () => {
    ws = workspace();
    const { root, rsaIntermediate } = await testPki();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    // Expired 3 days and 2 hours ago: daysUntilExpiry is floor(-3.08) = -4, which is "3 days ago", not 4.
    const leaf = await createLeaf({
      issuer: rsaIntermediate,
      dnsNames: [domain],
      notAfter: new Date(Date.now() - 3 * DAY - 2 * 3_600_000),
      notBefore: new Date(Date.now() - 90 * DAY),
    });
    tls = await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem });
    Object.assign(ws.env, { CERTKEEPER_RESOLVE: `*.days.${TEST_DOMAIN}=127.0.0.1`, CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true", CERTKEEPER_EXTRA_CA_FILE: caFile });
    await runCliJson(["org", "create", "--name", "Days"], { env: ws.env });
    await runCliJson(["user", "create", "--org", "Days", "--email", "days@acme.test", "--role", "owner", "--password", PASSWORD], { env: ws.env });
    serve = await startServe({ env: ws.env, cwd: ws.dir });
  });
  afterAll(async () => {
    await serve?.stop();
    await tls?.close();
  });

  test("a certificate that expired 3.1 days ago is \"3 days ago\" in the email, on the dashboard and its page, and in the CLI", async () => {
    const browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
    expect((await browser.signIn("days@acme.test", PASSWORD)).status).toBe(303);
    await browser.get("/channels/new?type=email&mode=live");
    expect((await browser.post("/channels", { mode: "live", type: "email", name: "Mail", "config.email": "ops@days.test" })).status).toBe(303);
    await browser.get("/");
    const added = await browser.post("/dashboard/certificates", { mode: "live", domain, port: String(tls.port), name: "" });
    expect(added.status).toBe(303);
    certificateId = /cert_\w+/.exec(added.headers.get("location")!)![0];

    // The email certificate.expired raised: written to the outbox (no SMTP server configured).
    const outbox = join(ws.dir, "data", "outbox");
    const deadline = Date.now() + 15_000;
    while (!(readdirSafe(outbox).some((name) => name.endsWith(".eml"))) && Date.now() < deadline) await Bun.sleep(50);
    const eml = readdirSafe(outbox).find((name) => name.endsWith(".eml"));
    expect(eml).toBeDefined();
    const email = await PostalMime.parse(readFileSync(join(outbox, eml!)));
    expect(email.text).toMatch(/Expires:\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC \(3 days ago\)/);

    const row = new RegExp(`<tr data-certificate-id="${certificateId}"[^>]*>([\\s\\S]*?)</tr>`).exec((await browser.get("/?mode=live")).text)![1]!;
    expect(row).toContain('<td data-label="Expires" data-days="-4">3 days ago');
    const page = await browser.get(`/certificates/${certificateId}?mode=live`);
    expect(/<p class="verdict"[^>]*>([^<]*)</.exec(page.text)![1]).toStartWith("Expired 3 days ago");
    expect(page.text).toContain("<dt>Expires</dt><dd>3 days ago");

    const check = await runCli(["check", `${domain}:${tls.port}`], { env: ws.env });
    expect(check.stdout).toBe(`expired  3 days ago  expired  ${domain}:${tls.port}\n`);
    const list = await runCli(["certificate", "list", "--org", "Days"], { env: ws.env });
    expect(list.stdout.split("\n")[1]).toMatch(new RegExp(`^${certificateId}\\s+expired\\s+3 days ago\\s+`));
    // The API's number stays CONTRACT §5's floor.
    expect((await runCliJson(["certificate", "list", "--org", "Days"], { env: ws.env }))[0].daysUntilExpiry).toBe(-4);
  });
});

function readdirSafe(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

describe("the first start", () => {
  test("the hints name the database in use, and pasted as printed they make the first owner, who can sign in", async () => {
    const ws = workspace();
    // A database of one's own choosing, relative to where the server runs.
    mkdirSync(join(ws.dir, "state"));
    const serve = await startServe({ env: { CERTKEEPER_DATABASE_URL: "file:state/mine.db", CERTKEEPER_LOG_LEVEL: "info" }, cwd: ws.dir });
    try {
      const deadline = Date.now() + 10_000;
      while (!serve.output().stdout.includes("The database is empty") && Date.now() < deadline) await Bun.sleep(50);
      const hint = JSON.parse(serve.output().stdout.split("\n").find((line) => line.includes("The database is empty"))!);
      const database = `file:${join(ws.dir, "state", "mine.db")}`;
      expect(hint.commands).toEqual([
        `CERTKEEPER_DATABASE_URL='${database}' npm run --silent certkeeper -- org create --name 'My org'`,
        `CERTKEEPER_DATABASE_URL='${database}' npm run --silent certkeeper -- user create --org 'My org' --email you@example.com --role owner --password -`,
      ]);
      // Run from certkeeper's folder as the hint says (not the server's), the password typed on stdin.
      const pasted = Bun.spawn(["bash", "-c", hint.commands.join(" &&\n")], { cwd: ROOT, stdin: new TextEncoder().encode(`${PASSWORD}\n`), stdout: "pipe", stderr: "pipe", env: cleanEnv() });
      const [stdout, stderr, code] = await Promise.all([new Response(pasted.stdout).text(), new Response(pasted.stderr).text(), pasted.exited]);
      expect({ code, stderr: messagesOf(stderr) }).toEqual({ code: 0, stderr: "" });
      expect(stdout).toContain("Organization My org created");
      const browser = new WebClient({ handle: (request) => fetch(request, { redirect: "manual" }) }, serve.url);
      expect((await browser.signIn("you@example.com", PASSWORD)).status).toBe(303);
    } finally {
      await serve.stop();
    }
  });
});

/** This process's environment without CERTKEEPER_* variables. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("CERTKEEPER_")) env[name] = value;
  return env;
}

describe("configuration", () => {
  test("a .env file in the folder it runs in configures the CLI and the server (Bun loads it)", async () => {
    const ws = workspace();
    writeFileSync(join(ws.dir, ".env"), `# certkeeper's settings\nCERTKEEPER_DATABASE_URL=file:from-dotenv.db\nCERTKEEPER_LOG_LEVEL=info\n`);
    const org = await runCliJson(["org", "create", "--name", "Dotenv"], { env: {}, cwd: ws.dir });
    expect(readdirSync(ws.dir)).toContain("from-dotenv.db");
    const serve = await startServe({ env: { CERTKEEPER_LOG_LEVEL: "info" }, cwd: ws.dir });
    try {
      const deadline = Date.now() + 10_000;
      while (!serve.output().stdout.includes("settings that differ") && Date.now() < deadline) await Bun.sleep(50);
      const settings = JSON.parse(serve.output().stdout.split("\n").find((line) => line.includes("settings that differ"))!);
      expect(settings.CERTKEEPER_DATABASE_URL).toBe("file:from-dotenv.db");
      // The server found the organization the CLI made: no first-start hint.
      expect(serve.output().stdout).not.toContain("The database is empty");
      expect(org.name).toBe("Dotenv");
    } finally {
      await serve.stop();
    }
  });

  test("a port in use stops serve with one line that names CERTKEEPER_PORT", async () => {
    const ws = workspace();
    const blocker = net.createServer();
    const port = await new Promise<number>((done) => blocker.listen(0, "127.0.0.1", () => done((blocker.address() as net.AddressInfo).port)));
    try {
      const result = await runCli(["serve"], { env: { ...ws.env, CERTKEEPER_HOST: "127.0.0.1", CERTKEEPER_PORT: String(port) }, timeoutMs: 15_000 });
      expect({ code: result.code, stdout: result.stdout }).toEqual({ code: 1, stdout: "" });
      expect(result.stderr).toBe(
        `Error: certkeeper could not start: port ${port} on 127.0.0.1 is in use by another process: stop that process, or choose another port with CERTKEEPER_PORT (for example CERTKEEPER_PORT=${port + 1} npm start)\n`,
      );
    } finally {
      await new Promise((done) => blocker.close(done));
    }
  });
});
