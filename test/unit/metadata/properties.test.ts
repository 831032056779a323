// Property tests: never-throws, round-trips, and the scanner agreeing with JSON.parse.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FIELD_PROPERTIES,
  FIELD_TYPES,
  addField,
  parseMetadata,
  parseMetadataText,
  removeField,
  renameField,
  serializeMetadata,
  setFieldValue,
  toElabftw,
  toNotebook,
} from '../../../shared/metadata/index.js';
import type { MetadataDoc, ParseMetadataResult } from '../../../shared/metadata/index.js';
import { scanJson } from '../../../shared/metadata/jsonText.js';

type Raw = Record<string, unknown>;

// ---- a generator of documents the parser accepts ----

const NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  '',
  ' ',
  '0',
  '10',
  'Sample mass',
  'µg/ml',
  '日本語',
  '😀',
  'a"b\\c',
];
const name = fc.oneof(
  fc.constantFrom(...NAMES),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const KNOWN_TOP = ['extra_fields', 'notebook', 'elabftw'];
const unknownKey = (known: readonly string[]) => name.filter((key) => !known.includes(key));
const unknownEntries = (known: readonly string[]) =>
  fc.uniqueArray(fc.tuple(unknownKey(known), fc.jsonValue({ maxDepth: 2 })), {
    maxLength: 3,
    selector: ([key]) => key,
  });
const text = fc.oneof(
  fc.string({ maxLength: 10 }),
  fc.constantFrom('2024-02-29', '2023-02-29', '10:30', 'a@b.org', 'https://x.org'),
);
const option = fc.string({ minLength: 1, maxLength: 6 });

function assign(target: Raw, entries: [string, unknown][]): Raw {
  for (const [key, value] of entries)
    Object.defineProperty(target, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return target;
}

/** A field object: properties of its type, any values (value problems do not refuse), unknown keys. */
const fieldObject = (groupIds: number[]) =>
  fc
    .record({
      type: fc.option(fc.constantFrom(...FIELD_TYPES, 'select-multi', 'select-one'), {
        nil: undefined,
      }),
      options: fc.uniqueArray(option, { minLength: 0, maxLength: 4 }),
      multi: fc.boolean(),
      units: fc.option(fc.uniqueArray(option, { maxLength: 3 }), { nil: undefined }),
      pick: fc.nat(),
      common: fc.record(
        {
          required: fc.boolean(),
          description: fc.string({ maxLength: 8 }),
          position: fc.oneof(
            fc.integer({ min: -5, max: 5 }),
            fc.double({ noNaN: true, noDefaultInfinity: true }),
          ),
          blank_value_on_duplicate: fc.boolean(),
          open_in_current_tab: fc.boolean(),
        },
        { requiredKeys: [] },
      ),
      value: fc.oneof(
        text,
        fc.boolean(),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.array(text, { maxLength: 3 }),
        fc.constant(null),
      ),
      valueFromOptions: fc.boolean(),
      group: fc.option(fc.constantFrom(...(groupIds.length > 0 ? groupIds : [0])), {
        nil: undefined,
      }),
      unknown: unknownEntries(FIELD_PROPERTIES),
    })
    .map((spec) => {
      const raw: Raw = { ...spec.common };
      if (spec.type !== undefined) raw['type'] = spec.type;
      const choice =
        spec.type === 'select' ||
        spec.type === 'radio' ||
        spec.type === 'select-multi' ||
        spec.type === 'select-one';
      if (choice) raw['options'] = spec.options;
      if (spec.type === 'select' && spec.multi) raw['allow_multi_values'] = true;
      if (spec.type === 'number' && spec.units) {
        raw['units'] = spec.units;
        raw['unit'] = spec.units[spec.pick % Math.max(1, spec.units.length)] ?? '';
      }
      raw['value'] =
        choice && spec.valueFromOptions
          ? (spec.options[spec.pick % Math.max(1, spec.options.length)] ?? '')
          : spec.value;
      if (spec.type === 'checkbox' && spec.valueFromOptions)
        raw['value'] = spec.pick % 2 === 0 ? 'on' : '';
      if (spec.group !== undefined && groupIds.length > 0) raw['group_id'] = spec.group;
      return assign(raw, spec.unknown);
    });

const groupList = fc.uniqueArray(fc.integer({ min: -3, max: 50 }), { maxLength: 4 });

const validDocument: fc.Arbitrary<Raw> = groupList.chain((ids) =>
  fc
    .record({
      fields: fc.uniqueArray(fc.tuple(name, fieldObject(ids)), {
        maxLength: 6,
        selector: ([key]) => key,
      }),
      notebook: fc.option(
        fc.record({
          display: fc.option(fc.boolean(), { nil: undefined }),
          groupNames: fc.array(fc.string({ maxLength: 6 }), {
            minLength: ids.length,
            maxLength: ids.length,
          }),
          groupUnknown: unknownEntries(['id', 'name']),
          unknown: unknownEntries(['display_main_text', 'extra_fields_groups']),
        }),
        { nil: undefined },
      ),
      key: fc.constantFrom('notebook', 'elabftw'),
      alsoOther: fc.boolean(),
      unknown: unknownEntries(KNOWN_TOP),
    })
    .map((spec) => {
      const raw: Raw = { extra_fields: assign({}, spec.fields) };
      // Fields may only name groups when there is a notebook object to hold them.
      const notebook =
        spec.notebook ??
        (ids.length > 0
          ? { display: undefined, groupNames: ids.map(String), groupUnknown: [], unknown: [] }
          : undefined);
      if (notebook) {
        const object: Raw = {};
        if (notebook.display !== undefined) object['display_main_text'] = notebook.display;
        object['extra_fields_groups'] = ids.map((id, index) =>
          assign(
            { id, name: notebook.groupNames[index] ?? '' },
            index === 0 ? notebook.groupUnknown : [],
          ),
        );
        raw[spec.key] = assign(object, notebook.unknown);
        // Both keys: "notebook" is read and "elabftw" is kept as an unknown key.
        if (spec.alsoOther && spec.key === 'notebook') raw['elabftw'] = { something: 'else' };
        // A null "notebook" beside "elabftw" is none: the groups are read from "elabftw".
        if (spec.alsoOther && spec.key === 'elabftw') raw['notebook'] = null;
      } else if (spec.alsoOther) {
        raw[spec.key] = null;
      }
      return assign(raw, spec.unknown);
    }),
);

function accepted(result: ParseMetadataResult): MetadataDoc {
  if (!result.ok) throw new Error(`refused: ${JSON.stringify(result.problems)}`);
  return result.doc;
}

function checkShape(result: ParseMetadataResult): void {
  expect(typeof result.ok).toBe('boolean');
  expect(Array.isArray(result.problems)).toBe(true);
  for (const problem of result.problems) {
    expect(typeof problem.message).toBe('string');
    expect(Array.isArray(problem.path)).toBe(true);
  }
  if (!result.ok) expect(result.problems.some((problem) => problem.blocksSaving)).toBe(true);
  else expect(result.problems.some((problem) => problem.blocksSaving)).toBe(false);
}

const RUNS = { numRuns: 300 };

describe('never throws', () => {
  it('on arbitrary values', () => {
    fc.assert(
      fc.property(
        fc.anything({
          maxDepth: 4,
          withNullPrototype: true,
          withBoxedValues: true,
          withMap: true,
          withSet: true,
        }),
        (value) => {
          checkShape(parseMetadata(value));
        },
      ),
      RUNS,
    );
  });

  it('on arbitrary JSON values and their text', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (value) => {
        checkShape(parseMetadata(value));
        checkShape(parseMetadata(JSON.stringify(value)));
      }),
      RUNS,
    );
  });

  it('on arbitrary strings, also with full Unicode', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.json()), (input) => {
        checkShape(parseMetadata(input));
        checkShape(parseMetadataText(input));
      }),
      RUNS,
    );
  });

  it('on document-like values with random properties', () => {
    const property = fc.constantFrom(...FIELD_PROPERTIES, 'other', '__proto__');
    const fieldLike = fc.dictionary(
      property,
      fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(...FIELD_TYPES, 'on', 1e308)),
    );
    const docLike = fc.record(
      {
        extra_fields: fc.dictionary(name, fc.oneof(fieldLike, fc.jsonValue({ maxDepth: 1 }))),
        notebook: fc.oneof(
          fc.jsonValue({ maxDepth: 2 }),
          fc.record({
            extra_fields_groups: fc.array(
              fc.dictionary(fc.constantFrom('id', 'name', 'x'), fc.jsonValue({ maxDepth: 1 })),
            ),
          }),
        ),
        elabftw: fc.jsonValue({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(docLike, (value) => {
        checkShape(parseMetadata(value));
        checkShape(parseMetadata(value, { builder: true }));
      }),
      RUNS,
    );
  });

  it('on huge numbers and deep nesting', () => {
    for (const text of [
      '{"a": 1e999}',
      '{"extra_fields": {"x": {"value": -1e999, "position": 1e999}}}',
      `{"a": ${'['.repeat(5000)}${']'.repeat(5000)}}`,
    ]) {
      checkShape(parseMetadata(text));
    }
  });
});

describe('round trips', () => {
  it('generated documents are accepted', () => {
    fc.assert(
      fc.property(validDocument, (raw) => {
        accepted(parseMetadata(raw));
        accepted(parseMetadata(JSON.stringify(raw)));
      }),
      RUNS,
    );
  });

  it('parse -> serialize -> parse gives the same document, unknown keys included', () => {
    fc.assert(
      fc.property(validDocument, (raw) => {
        const doc = accepted(parseMetadata(raw));
        const text = serializeMetadata(doc);
        const again = accepted(parseMetadata(text));
        expect(again).toEqual(doc);
        expect(serializeMetadata(again)).toBe(text);
        expect(accepted(parseMetadata(JSON.stringify(raw)))).toEqual(doc);
      }),
      RUNS,
    );
  });

  it('export then import gives the same document, in both forms', () => {
    fc.assert(
      fc.property(validDocument, (raw) => {
        const doc = accepted(parseMetadata(raw));
        expect(accepted(parseMetadata(toElabftw(doc)))).toEqual(doc);
        expect(accepted(parseMetadata(toNotebook(doc)))).toEqual(doc);
        expect(accepted(parseMetadata(serializeMetadata(doc, 'elabftw')))).toEqual(doc);
      }),
      RUNS,
    );
  });

  it('documents made by operations survive a save and a reload', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('add' as const), name, type: fc.constantFrom(...FIELD_TYPES) }),
      fc.record({ op: fc.constant('rename' as const), pick: fc.nat(), name }),
      fc.record({ op: fc.constant('remove' as const), pick: fc.nat() }),
      fc.record({
        op: fc.constant('set' as const),
        pick: fc.nat(),
        value: fc.oneof(text, fc.boolean()),
      }),
    );
    fc.assert(
      fc.property(validDocument, fc.array(step, { maxLength: 6 }), (raw, steps) => {
        let doc = accepted(parseMetadata(raw));
        for (const action of steps) {
          const target =
            doc.fields[('pick' in action ? action.pick : 0) % Math.max(1, doc.fields.length)]
              ?.name ?? '';
          const result =
            action.op === 'add'
              ? addField(doc, action.name, { type: action.type, options: ['a', 'b'] })
              : action.op === 'rename'
                ? renameField(doc, target, action.name)
                : action.op === 'remove'
                  ? removeField(doc, target)
                  : setFieldValue(doc, target, action.value);
          if (result.ok) doc = result.doc;
        }
        expect(accepted(parseMetadata(serializeMetadata(doc)))).toEqual(doc);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the code-mode scanner agrees with JSON.parse', () => {
  function parses(text: string): boolean {
    try {
      JSON.parse(text);
      return true;
    } catch {
      return false;
    }
  }

  it('on JSON texts, arbitrary strings and JSON with one character removed or changed', () => {
    const damaged = fc
      .tuple(
        fc.json({ maxDepth: 3 }),
        fc.nat(),
        fc.constantFrom('', ',', '"', '}', ']', ':', '\\', ' ', '0', '-', 'e', '\n', '\u0001'),
      )
      .map(([json, at, replacement]) => {
        const cut = json.length === 0 ? 0 : at % json.length;
        return json.slice(0, cut) + replacement + json.slice(cut + 1);
      });
    fc.assert(
      fc.property(fc.oneof(fc.json({ maxDepth: 3 }), fc.string(), damaged), (text) => {
        expect(scanJson(text).ok).toBe(parses(text));
      }),
      { numRuns: 1000 },
    );
  });
});
