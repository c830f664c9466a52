/**
 * The boundary is a test (STYLE §6): core imports no framework, driver, Bun API or adapter; its
 * folders show its parts, each behind a mod.ts face; adapters enter core only through those faces; core's
 * rooms stand on declared floors and every import runs down them; no import cycles.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { temporaryDirectory } from "./support/temp.ts";

const ROOT = join(import.meta.dir, "..");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|js|mjs)$/.test(name) ? [path] : [];
  });
}

/** Every module specifier a file imports or re-exports, statically or dynamically. */
function imports(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\bfrom\s+["']([^"']+)["']/g, /\bimport\s+["']([^"']+)["']/g, /\bimport\s*\(\s*["']([^"']+)["']/g, /\brequire\s*\(\s*["']([^"']+)["']/g];
  for (const pattern of patterns) for (const match of source.matchAll(pattern)) found.push(match[1]!);
  return found;
}

const FORBIDDEN_MODULES = [/^elysia/, /^@elysiajs\//, /^@libsql\//, /^libsql$/, /^bun(:|$)/, /^undici/, /^nodemailer/];

describe("core/", () => {
  const files = sourceFiles(join(ROOT, "core"));

  test("has source files to check", () => {
    expect(files.length).toBeGreaterThan(20);
  });

  test("imports no Elysia, libSQL, Bun module, transport library or adapter", () => {
    const violations: string[] = [];
    for (const file of files) {
      for (const specifier of imports(readFileSync(file, "utf8"))) {
        const reachesAdapters = specifier.startsWith(".") && relative(ROOT, join(file, "..", specifier)).startsWith("adapters");
        if (reachesAdapters || FORBIDDEN_MODULES.some((pattern) => pattern.test(specifier))) {
          violations.push(`${relative(ROOT, file)} imports ${specifier}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  test("uses no Bun global", () => {
    const violations = files.filter((file) => /\bBun\s*\./.test(readFileSync(file, "utf8").replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, "")));
    expect(violations.map((file) => relative(ROOT, file))).toEqual([]);
  });

  test("the checker itself catches a violation", () => {
    expect(imports('import { Elysia } from "elysia";\nexport * from "../adapters/x.ts";')).toEqual(["elysia", "../adapters/x.ts"]);
    expect(FORBIDDEN_MODULES.some((p) => p.test("bun:sqlite"))).toBe(true);
  });
});

/** The files `file` imports by a relative specifier, resolved to absolute paths. */
function localImports(file: string): string[] {
  return imports(readFileSync(file, "utf8"))
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => resolve(dirname(file), specifier));
}

const CORE = join(ROOT, "core");
/** Core's root holds its package face and nothing else. */
const CORE_ROOT_FILES = ["mod.ts"];
/**
 * Core's rooms (its folders), floor by floor from the ground up. A room imports only rooms on floors
 * below its own: never sideways, never up. A new room is declared here, on the floor its imports allow.
 */
const FLOORS: string[][] = [
  ["base"], // records, errors, clock, log, the work loop
  ["config", "schemas", "store"], // the settings, the API's shapes, the store's ports
  ["auth", "deployment", "net", "renewal"], // who is calling; issuances not yet served; connections, names, addresses; renewal deadlines
  ["accounts", "channels", "starttls", "watches"], // the settings area's logic, channel configs, STARTTLS, CT polling
  ["certificates", "ctlogs", "notify", "tls"], // a certificate's rules and views, following the CT logs, delivery, TLS retrieval
  ["ari", "dns", "metrics", "revocation"], // a CA's renewal information, what DNS says, counters and the exposition, OCSP and CRLs
  ["monitor"], // checks and what they change
  ["imports"], // the import worker
  ["operations"], // the API's operations and the services they compose
  ["openapi", "pipeline"], // the document; the one request pipeline
  ["http", "workspace"], // the faces onto the pipeline: HTTP, and the settings area's workspace
  ["app"], // createCore builds them all
];

/** The room (the folder of `root`) a path is in (`core/tls/x.ts` → "tls"), or null outside its folders. */
function roomOf(root: string, path: string): string | null {
  const rel = relative(root, path);
  return rel.startsWith("..") || !rel.includes("/") ? null : rel.split("/")[0]!;
}

/** The floor of each room in `floors` (0 = the ground). */
function floorOf(floors: string[][]): Map<string, number> {
  return new Map(floors.flatMap((rooms, floor) => rooms.map((room) => [room, floor] as const)));
}

/**
 * Every import among `files` (all under `root`) from one room (a folder of `root`) to another that
 * does not stand on a lower floor, as "from imports to (floor a → floor b)". Files at `root` itself
 * (its package face) may import any room.
 */
function climbingImports(root: string, files: string[], floors: string[][]): string[] {
  const floor = floorOf(floors);
  const violations: string[] = [];
  for (const file of files) {
    const from = roomOf(root, file);
    if (from === null) continue;
    for (const target of localImports(file)) {
      const to = roomOf(root, target);
      if (to === null || to === from) continue;
      const [a, b] = [floor.get(from) ?? -1, floor.get(to) ?? Infinity];
      if (b >= a) violations.push(`${relative(root, file)} imports ${relative(root, target)} (floor ${a} → ${b})`);
    }
  }
  return violations;
}

/** The first import cycle among `files`, as the list of files around it, or null. */
function findCycle(files: string[]): string[] | null {
  const graph = new Map(files.map((file) => [file, localImports(file).filter((target) => target !== file)]));
  const state = new Map<string, "visiting" | "done">();
  const stack: string[] = [];
  const visit = (file: string): string[] | null => {
    if (state.get(file) === "done") return null;
    if (state.get(file) === "visiting") return [...stack.slice(stack.indexOf(file)), file];
    state.set(file, "visiting");
    stack.push(file);
    for (const target of graph.get(file) ?? []) {
      const cycle = visit(target);
      if (cycle) return cycle;
    }
    stack.pop();
    state.set(file, "done");
    return null;
  };
  for (const file of files) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return null;
}

describe("core's folders and faces", () => {
  const coreFiles = sourceFiles(CORE);
  const adapterFiles = sourceFiles(join(ROOT, "adapters"));

  test("core's root holds only its package face; its parts are folders", () => {
    const loose = readdirSync(CORE).filter((name) => !statSync(join(CORE, name)).isDirectory() && !CORE_ROOT_FILES.includes(name));
    expect(loose).toEqual([]);
  });

  test("every core folder states its public face in a mod.ts", () => {
    const folders = readdirSync(CORE).filter((name) => statSync(join(CORE, name)).isDirectory());
    expect(folders.length).toBeGreaterThan(10);
    expect(folders.filter((folder) => !readdirSync(join(CORE, folder)).includes("mod.ts"))).toEqual([]);
  });

  test("adapters import core only through its faces (core/mod.ts and core/<folder>/mod.ts)", () => {
    const violations: string[] = [];
    for (const file of adapterFiles) {
      for (const target of localImports(file)) {
        const rel = relative(CORE, target);
        if (rel.startsWith("..")) continue;
        if (basename(target) !== "mod.ts" || rel.split("/").length > 2) violations.push(`${relative(ROOT, file)} imports core/${rel}`);
      }
    }
    expect(violations).toEqual([]);
  });

  test("no _private file is imported from outside its folder", () => {
    const violations: string[] = [];
    for (const file of [...coreFiles, ...adapterFiles]) {
      for (const target of localImports(file)) {
        if (basename(target).startsWith("_") && dirname(target) !== dirname(file)) {
          violations.push(`${relative(ROOT, file)} imports ${relative(ROOT, target)}`);
        }
      }
    }
    expect(violations).toEqual([]);
  });

  test("every room of core stands on exactly one declared floor", () => {
    const rooms = readdirSync(CORE).filter((name) => statSync(join(CORE, name)).isDirectory()).sort();
    expect(FLOORS.flat().sort()).toEqual(rooms);
  });

  test("no import climbs: each room imports only rooms on floors below its own", () => {
    expect(climbingImports(CORE, coreFiles, FLOORS)).toEqual([]);
  });

  test("core has no import cycle", () => {
    const cycle = findCycle(coreFiles);
    expect(cycle?.map((file) => relative(ROOT, file)) ?? null).toBeNull();
  });

  test("no import cycle between the adapters either", () => {
    const cycle = findCycle(adapterFiles);
    expect(cycle?.map((file) => relative(ROOT, file)) ?? null).toBeNull();
  });

  test("the checks themselves catch a violation", () => {
    expect(roomOf(CORE, join(CORE, "tls", "x509.ts"))).toBe("tls");
    expect(roomOf(CORE, join(CORE, "mod.ts"))).toBeNull();
    // A cycle of two files written to a scratch folder is found.
    const dir = temporaryDirectory("certkeeper-arch-");
    writeFileSync(join(dir, "a.ts"), 'import { b } from "./b.ts";\nexport const a = 1;');
    writeFileSync(join(dir, "b.ts"), 'import { a } from "./a.ts";\nexport const b = 2;');
    expect(findCycle([join(dir, "a.ts"), join(dir, "b.ts")])?.map((file) => basename(file))).toEqual(["a.ts", "b.ts", "a.ts"]);
  });

  test("the floor check catches an import that climbs, one sideways and one into an undeclared room", () => {
    // Rooms low/, high/, side/ and new/, with no cycle of files among them: only the floors forbid these.
    const root = temporaryDirectory("certkeeper-floors-");
    for (const room of ["low", "high", "side", "new"]) mkdirSync(join(root, room));
    writeFileSync(join(root, "low", "a.ts"), 'import { b } from "../high/b.ts";\nexport const a = 1;');
    writeFileSync(join(root, "high", "b.ts"), "export const b = 2;");
    writeFileSync(join(root, "high", "c.ts"), 'import { a } from "../low/a.ts";\nimport { d } from "../side/d.ts";\nimport { e } from "../new/e.ts";\nexport const c = a + d + e;');
    writeFileSync(join(root, "side", "d.ts"), "export const d = 3;");
    writeFileSync(join(root, "new", "e.ts"), "export const e = 4;");
    writeFileSync(join(root, "mod.ts"), 'export { a } from "./low/a.ts";\nexport { c } from "./high/c.ts";');
    const files = ["low/a.ts", "high/b.ts", "high/c.ts", "side/d.ts", "new/e.ts", "mod.ts"].map((path) => join(root, path));
    expect(climbingImports(root, files, [["low"], ["high", "side"]])).toEqual([
      "low/a.ts imports high/b.ts (floor 0 → 1)",
      "high/c.ts imports side/d.ts (floor 1 → 1)",
      "high/c.ts imports new/e.ts (floor 1 → Infinity)",
    ]);
  });
});
