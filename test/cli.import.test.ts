/**
 * `import --org ORG_ID [--mode live|test] FILE` (CONTRACT §17): the file formats (a plain list, CSV
 * with a header), and the command as a real process against real TLS servers: each line judged as
 * POST would, results at the end with their line numbers, exit 1 when any failed, progress on a
 * terminal (a real pseudo-terminal made by `script`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseImportFile, ImportFileError } from "../adapters/cli/import_file.ts";
import { chainPem, createLeaf, DAY } from "./support/pki.ts";
import { startTlsServer, type TlsTestServer } from "./support/servers.ts";
import { testPki, TEST_DOMAIN } from "./support/harness.ts";
import { CLI_MAIN, expectUsageError, runCli, runCliJson, workspacesRemovedAfterAll, type Workspace } from "./support/cli.ts";

setDefaultTimeout(60_000);
const workspace = workspacesRemovedAfterAll();

describe("the import file", () => {
  test("a plain list: one domain[:port] per line; blank lines and # comments skipped; line numbers kept", () => {
    expect(parseImportFile("a.example\n\n# the shop\nshop.example:8443\r\n  b.example  \n")).toEqual([
      { line: 1, body: { domain: "a.example" } },
      { line: 4, body: { domain: "shop.example", port: 8443 } },
      { line: 5, body: { domain: "b.example" } },
    ]);
  });

  test("a plain list: a comment after a space ends the line's name; an IPv6 address takes a port in brackets, and is passed whole without", () => {
    expect(parseImportFile("shop.example:443 # prod\nblog.example\t#staging\n[2001:db8::1]:8443\n2001:db8::2\n[2001:db8::3]\nodd#name.example\n")).toEqual([
      { line: 1, body: { domain: "shop.example", port: 443 } },
      { line: 2, body: { domain: "blog.example" } },
      { line: 3, body: { domain: "2001:db8::1", port: 8443 } },
      { line: 4, body: { domain: "2001:db8::2" } },
      { line: 5, body: { domain: "2001:db8::3" } },
      { line: 6, body: { domain: "odd#name.example" } },
    ]);
  });

  test("CSV: the header names the columns in any order; tags split on ;, quoted cells, empty cells left out", () => {
    const csv = 'name,domain,tags,port,protocol\n"Shop, EU",shop.example,team:web; prod ,8443,\nBlog,blog.example,,,smtp\n"Say ""hi""",hi.example,,x,\n';
    expect(parseImportFile(csv)).toEqual([
      { line: 2, body: { name: "Shop, EU", domain: "shop.example", tags: ["team:web", "prod"], port: 8443 } },
      { line: 3, body: { name: "Blog", domain: "blog.example", protocol: "smtp" } },
      // A port that is no number goes as written: the server refuses that item alone, naming the field.
      { line: 4, body: { name: 'Say "hi"', domain: "hi.example", port: "x" } },
    ]);
  });

  test("CSV: a quote inside an unquoted cell (27\" monitor) is a character of it; every row stays its own item", () => {
    const csv = ['domain,name', 'a.example.com,27" monitor', "b.example.com,web", 'c.example.com,24" monitor', "d.example.com,\"multi", 'line"', ""].join("\n");
    expect(parseImportFile(csv)).toEqual([
      { line: 2, body: { domain: "a.example.com", name: '27" monitor' } },
      { line: 3, body: { domain: "b.example.com", name: "web" } },
      { line: 4, body: { domain: "c.example.com", name: '24" monitor' } },
      { line: 5, body: { domain: "d.example.com", name: "multi\nline" } },
    ]);
  });

  test("refuses an unknown column, a row with too many cells, an unclosed quote and an empty file, naming the line", () => {
    const error = (text: string) => {
      try {
        parseImportFile(text);
      } catch (e) {
        expect(e).toBeInstanceOf(ImportFileError);
        return (e as Error).message;
      }
      throw new Error("no error");
    };
    expect(error("domain,owner\na.example,me\n")).toBe('line 1: unknown column "owner": the header may name domain, port, name, tags, protocol, alertPolicy');
    expect(error("domain,port\na.example,443,extra\n")).toBe("line 2: 3 cells, but the header names 2 columns");
    expect(error('domain,name\na.example,"open\n')).toBe("line 2: a quoted cell is never closed");
    expect(error("\n# nothing\n")).toContain("the file holds no domains");
  });
});

describe("import as a real process", () => {
  const base = `import.${TEST_DOMAIN}`;
  const servers: TlsTestServer[] = [];
  let ws: Workspace;
  let env: Record<string, string>;
  let org: any;
  let closedPort: number;

  beforeAll(async () => {
    const { root, rsaIntermediate } = await testPki();
    ws = workspace();
    const caFile = join(ws.dir, "root.pem");
    writeFileSync(caFile, root.certPem);
    for (const name of ["shop", "blog", "api"]) {
      const leaf = await createLeaf({ issuer: rsaIntermediate, dnsNames: [`${name}.${base}`], notAfter: new Date(Date.now() + 60 * DAY) });
      servers.push(await startTlsServer({ cert: chainPem(leaf, rsaIntermediate), key: leaf.keyPem }));
    }
    closedPort = servers[2]!.port;
    await servers[2]!.close();
    env = { ...ws.env, CERTKEEPER_RESOLVE: `*.${base}=127.0.0.1`, CERTKEEPER_ALLOW_PRIVATE_TARGETS: "true", CERTKEEPER_EXTRA_CA_FILE: caFile, CERTKEEPER_TLS_TIMEOUT: "3s" };
    org = await runCliJson(["org", "create", "--name", "Importers"], { env });
  });
  afterAll(() => Promise.all(servers.slice(0, 2).map((s) => s.close())));

  test("a list: each line judged as POST would; failures listed by line, a summary, exit 1", async () => {
    const file = join(ws.dir, "list.txt");
    writeFileSync(file, `shop.${base}:${servers[0]!.port}\nbad..domain\n# gone\napi.${base}:${closedPort}\nshop.${base}:${servers[0]!.port}\n`);
    const result = await runCli(["import", "--org", org.id, file], { env });
    expect(result.code).toBe(1);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toStartWith(`${file}:2  bad..domain  invalid_domain: Domain "bad..domain" is not a valid domain`);
    expect(lines[1]).toStartWith(`${file}:4  api.${base}  certificate_not_found: No TLS certificate could be retrieved`);
    expect(lines[2]).toStartWith(`${file}:5  shop.${base}  duplicate_domain:`);
    expect(lines[3]).toMatch(/^Import imp_\w+: 4 lines, 1 created, 3 failed\.$/);
    const listed = await runCliJson(["certificate", "list", "--org", org.id], { env });
    expect(listed.map((c: any) => [c.domain, c.port])).toEqual([[`shop.${base}`, servers[0]!.port]]);
  });

  test("CSV with names and tags into test data; --json prints the finished import with every item's result; exit 0", async () => {
    const file = join(ws.dir, "fleet.csv");
    writeFileSync(file, `domain,port,name,tags\nblog.${base},${servers[1]!.port},The blog,team:web;prod\nshop.${base},${servers[0]!.port},Shop,team:web\n`);
    const result = await runCliJson(["import", "--org", org.id, "--mode", "test", file], { env });
    expect(result).toMatchObject({ status: "finished", total: 2, processed: 2, created: 2, failed: 0 });
    expect(result.results.map((r: any) => [r.index, r.status, r.error])).toEqual([[0, "created", null], [1, "created", null]]);
    const listed = await runCliJson(["certificate", "list", "--org", org.id, "--mode", "test"], { env });
    expect(listed.map((c: any) => [c.name, c.tags]).sort()).toEqual([["Shop", ["team:web"]], ["The blog", ["prod", "team:web"]]]);
  });

  test("on a terminal it shows progress, then the results", async () => {
    const file = join(ws.dir, "one.txt");
    writeFileSync(file, `blog.${base}:${servers[1]!.port}\n`);
    const command = [process.execPath, CLI_MAIN, "import", "--org", org.id, file].join(" ");
    const child = Bun.spawn(["script", "-qec", command, "/dev/null"], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
    const [stdout, code] = await Promise.all([new Response(child.stdout).text(), child.exited]);
    expect(code).toBe(0);
    expect(stdout).toContain("Importing [");
    expect(stdout).toMatch(/1\/1 {2}created 1 {2}failed 0/);
    expect(stdout).toMatch(/Import imp_\w+: 1 line, 1 created, 0 failed\./);
  });

  test("names what is wrong: a missing file, an unknown organization, a bad mode, no file at all", async () => {
    expectUsageError(await runCli(["import", "--org", org.id, join(ws.dir, "nope.txt")], { env }), /FILE ".*nope\.txt" cannot be read \(ENOENT\)/);
    const unknown = await runCli(["import", "--org", "org_nothere000000000000", join(ws.dir, "one.txt")], { env });
    expect([unknown.code, unknown.stderr]).toEqual([1, expect.stringContaining('No organization with id or name "org_nothere000000000000"')]);
    expectUsageError(await runCli(["import", "--org", org.id, "--mode", "prod", join(ws.dir, "one.txt")], { env }), /--mode/);
    expectUsageError(await runCli(["import", "--org", org.id], { env }), /FILE/);
  });
});
