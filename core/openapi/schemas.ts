/**
 * TypeBox schemas as the plain JSON Schema 2020-12 that OpenAPI 3.1 takes: TypeBox's symbol keys and
 * `$id` dropped, unions of literals written as `enum`, and named schemas moved to
 * `components/schemas` and referenced wherever they recur.
 */
import { Kind, type TSchema } from "@sinclair/typebox";

export type JsonSchema = { [key: string]: unknown };

/** Keywords whose values are data, not schemas: copied as they are. */
const VALUE_KEYWORDS = new Set(["examples", "default", "const", "enum", "required"]);
/** Keywords whose values map names to schemas (a property may be called "type" or "default"). */
const NAMED_SCHEMA_KEYWORDS = new Set(["properties", "patternProperties", "$defs", "dependentSchemas"]);

/** A component name as OpenAPI allows it. */
const COMPONENT_NAME = /^[A-Za-z0-9._-]+$/;

/**
 * Converts schemas and collects the named ones it meets in `components`. A schema is named when it
 * has a `title`, or when it is (structurally) one of `named`; only objects and unions are moved to
 * components, scalars stay inline where they read best.
 */
export class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};
  readonly #names = new Map<string, string>();

  constructor(named: Record<string, TSchema> = {}) {
    for (const [name, schema] of Object.entries(named)) {
      if (!COMPONENT_NAME.test(name) || !hoistable(schema)) continue;
      const key = canonical(plain(schema));
      if (!this.#names.has(key)) this.#names.set(key, name);
    }
  }

  /** `schema` as plain JSON Schema, itself a `$ref` when it is named. */
  convert(schema: TSchema | JsonSchema): JsonSchema {
    return this.#convert(schema, true) as JsonSchema;
  }

  /** `schema` as plain JSON Schema, never a `$ref` itself (its parts still may be). */
  inline(schema: TSchema | JsonSchema): JsonSchema {
    return this.#convert(schema, false) as JsonSchema;
  }

  #convert(value: unknown, mayRefer: boolean): unknown {
    if (Array.isArray(value)) return value.map((item) => this.#convert(item, true));
    if (typeof value !== "object" || value === null) return value;
    const source = value as JsonSchema;
    const name = mayRefer ? this.#nameOf(source) : undefined;
    if (name) {
      if (!(name in this.components)) {
        this.components[name] = {}; // claims the name first, so a recursive schema ends
        this.components[name] = this.#convert(source, false) as JsonSchema;
      }
      return { $ref: `#/components/schemas/${name}` };
    }
    const out: JsonSchema = {};
    for (const key of Object.keys(source)) {
      if (key === "$id") continue;
      const part = source[key];
      if (VALUE_KEYWORDS.has(key)) out[key] = plain(part);
      else if (NAMED_SCHEMA_KEYWORDS.has(key) && isMap(part)) {
        out[key] = Object.fromEntries(Object.entries(part).map(([name, s]) => [name, this.#convert(s, true)]));
      } else out[key] = this.#convert(part, true);
    }
    return literalUnionAsEnum(out);
  }

  #nameOf(schema: JsonSchema): string | undefined {
    if (!isSchema(schema) || !hoistable(schema)) return undefined;
    const named = this.#names.get(canonical(plain(schema)));
    if (named) return named;
    return typeof schema.title === "string" ? componentName(schema.title) : undefined;
  }
}

/** A deep copy without symbol keys or `$id`: what JSON sees, minus TypeBox's identifiers. */
export function plain(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(plain);
  if (typeof value !== "object" || value === null) return value;
  const out: JsonSchema = {};
  for (const key of Object.keys(value)) {
    if (key !== "$id") out[key] = plain((value as JsonSchema)[key]);
  }
  return out;
}

/** `anyOf` of literals (and perhaps null), rewritten as one `enum`, which documentation renders as a list. */
function literalUnionAsEnum(schema: JsonSchema): JsonSchema {
  const members = schema.anyOf;
  if (!Array.isArray(members) || members.length === 0) return schema;
  const values: unknown[] = [];
  const types = new Set<string>();
  for (const member of members as JsonSchema[]) {
    const keys = Object.keys(member).filter((key) => key !== "type");
    if (member.type === "null" && keys.length === 0) {
      values.push(null);
      types.add("null");
    } else if (keys.length === 1 && "const" in member && typeof member.type === "string") {
      values.push(member.const);
      types.add(member.type);
    } else {
      return schema;
    }
  }
  const { anyOf: _, ...rest } = schema;
  return { type: types.size === 1 ? [...types][0] : [...types], enum: values, ...rest };
}

/** "Email config" → "EmailConfig"; undefined when nothing usable is left. */
function componentName(title: string): string | undefined {
  const name = title
    .split(/[^A-Za-z0-9._-]+/)
    .filter(Boolean)
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join("");
  return COMPONENT_NAME.test(name) ? name : undefined;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isSchema(value: object): boolean {
  return Kind in value || "type" in value || "anyOf" in value || "$ref" in value;
}

function hoistable(schema: object): boolean {
  const s = schema as JsonSchema;
  return s.type === "object" || Array.isArray(s.anyOf) || Array.isArray(s.oneOf) || Array.isArray(s.allOf);
}

/** A stable text for structural comparison: keys sorted. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, (v as JsonSchema)[k]]))
      : v,
  );
}
