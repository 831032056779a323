// Serializing, and moving a document between Labstation and the notebook service (eLabFTW).

import { describe, expect, it } from 'vitest';
import {
  parseMetadata,
  serializeMetadata,
  toElabftw,
  toNotebook,
} from '../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../shared/metadata/index.js';

function docOf(input: unknown): MetadataDoc {
  const result = parseMetadata(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

/** A template as the notebook service exports it. */
const ELABFTW_TEMPLATE = {
  elabftw: {
    display_main_text: false,
    extra_fields_groups: [
      { id: 1, name: 'Sample' },
      { id: 2, name: 'Run' },
    ],
  },
  extra_fields: {
    'Sample mass': {
      type: 'number',
      value: '12.5',
      units: ['mg', 'g'],
      unit: 'mg',
      group_id: 1,
      position: 1,
    },
    Solvents: {
      type: 'select',
      allow_multi_values: true,
      options: ['water', 'ethanol', 'DMSO'],
      value: ['water', 'DMSO'],
      group_id: 1,
      position: 2,
    },
    Degassed: { type: 'checkbox', value: 'on', group_id: 2 },
    Filtered: { type: 'checkbox', value: '', group_id: 2, blank_value_on_duplicate: true },
    Sonicated: { type: 'checkbox', value: 'off', group_id: 2 },
    Protocol: { type: 'url', value: 'https://protocols.example/p/7', open_in_current_tab: true },
    Status: { type: 'select-one', options: ['planned', 'done'], value: 'planned' },
  },
  custom_app: { version: 3 },
};

describe('import from the notebook service', () => {
  it('reads its keys, spellings and checkbox values', () => {
    const doc = docOf(ELABFTW_TEMPLATE);
    expect(doc.notebook?.display_main_text).toBe(false);
    expect(doc.notebook?.extra_fields_groups?.map((group) => group.name)).toEqual([
      'Sample',
      'Run',
    ]);
    expect(doc.fields.find((field) => field.name === 'Degassed')?.value).toBe(true);
    expect(doc.fields.find((field) => field.name === 'Filtered')?.value).toBe(false);
    // Its entry page writes "off" when someone unticks a box.
    expect(doc.fields.find((field) => field.name === 'Sonicated')?.value).toBe(false);
    expect(parseMetadata(ELABFTW_TEMPLATE).problems).toEqual([]);
    expect(doc.fields.find((field) => field.name === 'Status')).toMatchObject({
      type: 'select',
      value: 'planned',
    });
    expect(doc.unknown).toEqual([['custom_app', { version: 3 }]]);
  });
});

describe('export', () => {
  it('toNotebook writes the "notebook" key, booleans, and unknown keys last', () => {
    const json = toNotebook(docOf(ELABFTW_TEMPLATE));
    expect(Object.keys(json)).toEqual(['extra_fields', 'notebook', 'custom_app']);
    expect(json['notebook']).toEqual(ELABFTW_TEMPLATE.elabftw);
    const fields = json['extra_fields'] as Record<string, Record<string, unknown>>;
    expect(fields['Degassed']?.['value']).toBe(true);
    expect(fields['Status']).toEqual({
      type: 'select',
      value: 'planned',
      options: ['planned', 'done'],
    });
  });

  it('toElabftw writes the "elabftw" key and "on" / "" checkboxes, numbers unchanged', () => {
    const doc = docOf({
      notebook: { extra_fields_groups: [{ id: 1, name: 'G' }] },
      extra_fields: {
        A: { type: 'checkbox', value: true },
        B: { type: 'checkbox', value: false },
        N: { type: 'number', value: 3 },
        M: { type: 'select', options: ['x', 'y'], allow_multi_values: true, value: ['y'] },
      },
    });
    expect(toElabftw(doc)).toEqual({
      extra_fields: {
        A: { type: 'checkbox', value: 'on' },
        B: { type: 'checkbox', value: '' },
        N: { type: 'number', value: 3 },
        M: { type: 'select', value: ['y'], options: ['x', 'y'], allow_multi_values: true },
      },
      elabftw: { extra_fields_groups: [{ id: 1, name: 'G' }] },
    });
  });

  it('a document without a notebook object gets none', () => {
    expect(toElabftw(docOf({ extra_fields: {} }))).toEqual({ extra_fields: {} });
  });

  it('a document read from both keys keeps "notebook" in the eLabFTW form, so nothing is lost', () => {
    const doc = docOf({
      notebook: { extra_fields_groups: [{ id: 1, name: 'Ours' }] },
      elabftw: { anything: true },
    });
    const json = toElabftw(doc);
    expect(json['elabftw']).toEqual({ anything: true });
    expect(json['notebook']).toEqual({ extra_fields_groups: [{ id: 1, name: 'Ours' }] });
    expect(docOf(json)).toEqual(doc);
  });

  it('export then import gives the same document, in both forms', () => {
    const doc = docOf(ELABFTW_TEMPLATE);
    expect(docOf(toElabftw(doc))).toEqual(doc);
    expect(docOf(toNotebook(doc))).toEqual(doc);
    expect(docOf(serializeMetadata(doc, 'elabftw'))).toEqual(doc);
  });
});

describe('serializeMetadata', () => {
  it('is deterministic JSON with 2-space indentation', () => {
    const doc = docOf({
      extra_fields: { A: { value: 'x', description: 'd', type: 'text' } },
      z: 1,
    });
    expect(serializeMetadata(doc)).toBe(
      '{\n  "extra_fields": {\n    "A": {\n      "type": "text",\n      "value": "x",\n      "description": "d"\n    }\n  },\n  "z": 1\n}',
    );
    expect(serializeMetadata(docOf(serializeMetadata(doc)))).toBe(serializeMetadata(doc));
  });

  it('writes "__proto__" names as data, never as a prototype', () => {
    const doc = docOf('{"extra_fields": {"__proto__": {"value": "x"}}, "__proto__": {"a": 1}}');
    const text = serializeMetadata(doc);
    expect(text).toContain('"__proto__": {\n      "type": "text"');
    expect(docOf(text)).toEqual(doc);
  });
});
