/**
 * zod schemas -> the JSON Schemas (2020-12, OpenAPI 3.1's dialect) of the OpenAPI document.
 * Schemas named with `.meta({ id })` and recursive ones become `components.schemas` entries that
 * operations point to with `$ref`; everything else is inlined where it is used.
 */
import { z } from 'zod';

export type JsonSchema = { [key: string]: unknown };

/**
 * Requests are described as clients send them (`input`: fields with a default are optional,
 * coerced values are given before coercion); responses as the server sends them (`output`).
 */
export type SchemaIo = 'input' | 'output';

const COMPONENT_REF = '#/components/schemas/';
/** A `$ref` whose component name is decided in `finish()`: `\0<io>\0<key>`. */
const PENDING = '\u0000';
const COMPONENT_NAME_RE = /^[A-Za-z0-9._-]+$/;

export class SchemaComponents {
  /** key -> the schema as each direction describes it, with pending refs. */
  private readonly entries = new Map<string, Partial<Record<SchemaIo, JsonSchema>>>();

  /**
   * The JSON Schema of `schema` for one direction. `owner` names the components made of its
   * unnamed recursive parts (`<owner>_schema0`), so they stay distinct and stable.
   */
  convert(schema: z.ZodType, io: SchemaIo, owner: string): JsonSchema {
    const raw = z.toJSONSchema(schema, {
      io,
      target: 'draft-2020-12',
      // A transform's result cannot be written as JSON Schema: it is described as any value.
      unrepresentable: 'any',
      cycles: 'ref',
      reused: 'inline',
    }) as JsonSchema;
    const { $defs, ...root } = raw;
    delete root.$schema;
    const defs = ($defs ?? {}) as Record<string, JsonSchema>;
    const keys = new Map<string, string>();
    for (const name of Object.keys(defs)) {
      keys.set(name, name.startsWith('__') ? `${owner}_${name.slice(2)}` : name);
    }
    // A recursive schema without an id refers to itself as '#': it becomes a component too.
    const rootKey = containsRef(root, '#') ? owner : undefined;
    const relink = (node: unknown): unknown =>
      mapRefs(tidy(node), (ref) => {
        if (ref === '#') return pending(io, owner);
        const key = ref.startsWith('#/$defs/') ? keys.get(ref.slice('#/$defs/'.length)) : undefined;
        if (key === undefined) throw new Error(`${owner}: unexpected $ref ${ref}`);
        return pending(io, key);
      });
    for (const [name, def] of Object.entries(defs)) this.store(keys.get(name)!, io, relink(def));
    if (rootKey !== undefined) {
      this.store(rootKey, io, relink(root));
      return { $ref: pending(io, rootKey) };
    }
    return relink(root) as JsonSchema;
  }

  private store(key: string, io: SchemaIo, schema: unknown): void {
    if (!COMPONENT_NAME_RE.test(key)) {
      throw new Error(`schema id ${JSON.stringify(key)}: use letters, digits, '.', '-', '_'`);
    }
    const entry = this.entries.get(key) ?? {};
    const known = entry[io];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(schema)) {
      throw new Error(`two different schemas are named ${key}`);
    }
    entry[io] = schema as JsonSchema;
    this.entries.set(key, entry);
  }

  /**
   * Names the components and replaces the pending refs in `document`: one component when a
   * schema reads the same both ways, else `<id>` for responses and `<id>Input` for requests.
   */
  finish<T>(document: T): { document: T; schemas: Record<string, JsonSchema> } {
    const merged = new Set(
      [...this.entries].filter(([, entry]) => entry.input && entry.output).map(([key]) => key),
    );
    const nameOf = (io: SchemaIo, key: string): string =>
      io === 'input' && !merged.has(key) && this.entries.get(key)?.output ? `${key}Input` : key;
    const resolve = (node: unknown): unknown =>
      mapRefs(node, (ref) => {
        if (!ref.startsWith(PENDING)) return ref;
        const [, io, key] = ref.split(PENDING) as [string, SchemaIo, string];
        return COMPONENT_REF + nameOf(io, key);
      });
    // Two readings are one component when they match once their own refs are named; splitting
    // one can make another differ, so repeat until nothing changes.
    for (let changed = true; changed;) {
      changed = false;
      for (const key of [...merged]) {
        const { input, output } = this.entries.get(key)!;
        if (JSON.stringify(resolve(input)) !== JSON.stringify(resolve(output))) {
          merged.delete(key);
          changed = true;
        }
      }
    }
    const schemas: Record<string, JsonSchema> = {};
    for (const key of [...this.entries.keys()].sort()) {
      const entry = this.entries.get(key)!;
      for (const io of ['output', 'input'] as const) {
        const schema = entry[io];
        if (schema === undefined) continue;
        const name = nameOf(io, key);
        const resolved = resolve(schema) as JsonSchema;
        const known = schemas[name];
        if (known !== undefined && JSON.stringify(known) !== JSON.stringify(resolved)) {
          throw new Error(`two different schemas are named ${name}`);
        }
        schemas[name] = resolved;
      }
    }
    const sorted = Object.fromEntries(
      Object.keys(schemas)
        .sort()
        .map((name) => [name, schemas[name]]),
    );
    return { document: resolve(document) as T, schemas: sorted };
  }
}

function pending(io: SchemaIo, key: string): string {
  return `${PENDING}${io}${PENDING}${key}`;
}

function containsRef(node: unknown, ref: string): boolean {
  let found = false;
  mapRefs(node, (value) => {
    if (value === ref) found = true;
    return value;
  });
  return found;
}

/** A copy of `node` with every `$ref` string passed through `change`. */
function mapRefs(node: unknown, change: (ref: string) => string): unknown {
  if (Array.isArray(node)) return node.map((item) => mapRefs(item, change));
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    out[key] = key === '$ref' && typeof value === 'string' ? change(value) : mapRefs(value, change);
  }
  return out;
}

const SAFE_BOUNDS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/**
 * Drops what zod adds that says nothing to a reader: the safe-integer bounds of every integer,
 * and the long regular expression that spells out a `format` (date-time, email, uuid, ...).
 */
function tidy(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(tidy);
  if (node === null || typeof node !== 'object') return node;
  const out: JsonSchema = {};
  const object = node as JsonSchema;
  for (const [key, value] of Object.entries(object)) {
    if ((key === 'minimum' || key === 'maximum') && SAFE_BOUNDS.has(value as number)) continue;
    if (key === 'pattern' && typeof object.format === 'string') continue;
    out[key] = tidy(value);
  }
  return out;
}
