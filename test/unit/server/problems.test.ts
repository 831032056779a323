import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { zodProblems } from '../../../electron/core/server/harvest/problems.js';

const schema = z
  .object({
    name: z.string().min(1).max(5),
    code: z.string().regex(/^[a-z]+$/),
    url: z.url(),
    count: z.number().int().min(1).max(10),
    ratio: z.number().gt(0),
    enabled: z.boolean(),
    kind: z.enum(['local', 'server']),
    watch: z.array(z.string()).min(1),
    step: z.number().multipleOf(5),
    ids: z.array(z.object({ id: z.number().int().nullable() })).optional(),
  })
  .strict();

function typesOf(input: Record<string, unknown>): Record<string, string> {
  const result = schema.safeParse(input);
  if (result.success) return {};
  return Object.fromEntries(
    zodProblems('body', result.error, input, schema).map((p) => [p.loc.join('.'), p.type]),
  );
}

const valid = {
  name: 'ab',
  code: 'abc',
  url: 'https://example.org',
  count: 2,
  ratio: 0.5,
  enabled: true,
  kind: 'local',
  watch: ['/data'],
  step: 10,
};

describe('zodProblems', () => {
  it("names each problem with the type FastAPI (pydantic 2) gives it, as the API's clients read them", () => {
    expect(typesOf(valid)).toEqual({});
    expect(
      typesOf({
        name: '',
        code: 'ABC',
        url: 'not a url',
        count: 0,
        ratio: 0,
        enabled: 'yes',
        kind: 'cloud',
        watch: [],
        step: 7,
        colour: 'red',
      }),
    ).toEqual({
      'body.name': 'string_too_short',
      'body.code': 'string_pattern_mismatch',
      'body.url': 'url_parsing',
      'body.count': 'greater_than_equal',
      'body.ratio': 'greater_than',
      'body.enabled': 'bool_type',
      'body.kind': 'enum',
      'body.watch': 'too_short',
      'body.step': 'multiple_of',
      'body.colour': 'extra_forbidden',
    });
    expect(typesOf({ ...valid, name: 'abcdef', count: 11, watch: 'x' })).toEqual({
      'body.name': 'string_too_long',
      'body.count': 'less_than_equal',
      'body.watch': 'list_type',
    });
    expect(typesOf({ ...valid, name: 5, count: 1.5, ratio: 'x' })).toEqual({
      'body.name': 'string_type',
      'body.count': 'int_from_float',
      'body.ratio': 'float_parsing',
    });
    // A whole number's wrong type is an int's, also in a list of objects and when nullable.
    expect(typesOf({ ...valid, count: '2', ratio: [], ids: [{ id: 1 }, { id: 'x' }] })).toEqual({
      'body.count': 'int_parsing',
      'body.ratio': 'float_type',
      'body.ids.1.id': 'int_parsing',
    });
    expect(typesOf({ ...valid, count: true, ids: [{ id: [] }, { id: 0.5 }] })).toEqual({
      'body.count': 'int_type',
      'body.ids.0.id': 'int_type',
      'body.ids.1.id': 'int_from_float',
    });
    const withoutName: Record<string, unknown> = { ...valid };
    delete withoutName.name;
    expect(typesOf(withoutName)).toEqual({ 'body.name': 'missing' });
  });
});
