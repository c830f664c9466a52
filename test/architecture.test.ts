/** The boundary is a test (STYLE §6): core imports no framework, driver, Bun API or adapter. */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

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
