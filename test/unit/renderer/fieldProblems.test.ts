/**
 * The builder shows each problem once: at the field it is about (without the path the field
 * shows already), or in the list above the fields when it is about no field.
 */
import { describe, expect, it } from 'vitest';
import { parseMetadata } from '../../../shared/metadata/index.js';
import type { MetadataDoc } from '../../../shared/metadata/index.js';
import { problemsByField } from '../../../renderer/src/features/notebook/problems.js';

function docOf(input: unknown): MetadataDoc {
  const result = parseMetadata(input);
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.doc;
}

describe('problemsByField', () => {
  it('files the problems of a field named "" at that field, not among the general ones', () => {
    const problems = problemsByField(
      docOf({
        extra_fields: {
          '': { type: 'email', value: 'not-an-email' },
          Contact: { type: 'email', value: 'nor-this' },
        },
      }),
    );
    expect(problems.general).toEqual([]);
    expect(problems.fields.get('')).toEqual([
      { text: '"not-an-email" is not a valid e-mail address', severity: 'error' },
    ]);
    expect(problems.fields.get('Contact')).toEqual([
      { text: '"nor-this" is not a valid e-mail address', severity: 'error' },
    ]);
  });

  it('a document without problems has none anywhere', () => {
    const problems = problemsByField(docOf({ extra_fields: { a: { value: 'x' } } }));
    expect(problems.general).toEqual([]);
    expect(problems.fields.size).toBe(0);
  });
});
