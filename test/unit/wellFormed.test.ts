/**
 * shared/wellFormed.ts: the walk every carrier runs over a body or call arguments for text
 * that is not well-formed Unicode, and shared/text.ts's one-line rule built on it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lineProblem, lineSchema } from '../../shared/text.js';
import { illFormedTextPath, pathText } from '../../shared/wellFormed.js';

describe('illFormedTextPath', () => {
  it('names the first lone surrogate in a value or a key, by its place', () => {
    expect(illFormedTextPath({ a: 'ok', b: [1, null, { c: 'x\ud800' }] })).toEqual(['b', 2, 'c']);
    expect(illFormedTextPath({ a: { 'k\udfff': 1 } })).toEqual(['a', 'k\ufffd']);
    expect(illFormedTextPath('\udc00')).toEqual([]);
    expect(illFormedTextPath({ pair: '😀', text: 'é', n: 1, t: true, z: null })).toBeNull();
    // A high surrogate at the end, a low one first: both alone.
    expect(illFormedTextPath(['ok', 'a\ud83d'])).toEqual([1]);
    expect(illFormedTextPath(['\ude00b'])).toEqual([0]);
    expect(pathText(['b', 2, 'c'], '(arguments)')).toBe('b[2].c');
    expect(pathText([], '(arguments)')).toBe('(arguments)');
  });

  it('walks a body nested as deep as JSON.parse takes, without overflowing the stack', () => {
    const depth = 200_000;
    const deep = JSON.parse(`${'['.repeat(depth)}"\\ud800"${']'.repeat(depth)}`) as unknown;
    expect(illFormedTextPath(deep)).toHaveLength(depth);
  });

  it('does not look into what is not plain data (a stream, a buffer)', () => {
    class Stream {
      name = 'x\ud800';
    }
    expect(illFormedTextPath(new Stream())).toBeNull();
    expect(illFormedTextPath(Buffer.from('\ud800'))).toBeNull();
  });

  it('agrees with isWellFormed over any JSON value, never throwing', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, text) => {
        expect(illFormedTextPath(value)).toBeNull();
        const found = illFormedTextPath({ value, text });
        expect(found === null).toBe(
          (text as unknown as { isWellFormed(): boolean }).isWellFormed(),
        );
      }),
    );
  });
});

describe('the one-line rule', () => {
  it('refuses lone surrogates, control characters and line separators, by name', () => {
    expect(lineProblem('s\ud800u')).toBe('is not well-formed Unicode (lone surrogate)');
    expect(lineProblem('a\tb')).toBe('must not hold control characters (NUL, tab, line break)');
    for (const c of ['\u2028', '\u2029']) {
      expect(lineProblem(`a${c}b`)).toBe(
        'must not hold line or paragraph separators (U+2028, U+2029)',
      );
    }
    // Right-to-left names carry marks and embeddings: text, not controls to refuse.
    for (const ok of ['Ada', 'נועה', 'كريم\u200f', 'a\u200eb', '\u202bكريم\u202c', '😀 Ünïcode']) {
      expect(lineProblem(ok)).toBeNull();
    }
    expect(lineSchema(10).safeParse(' x\u2028y ').error?.issues[0].message).toMatch(/separators/);
    expect(lineSchema(10).parse('  fine  ')).toBe('fine');
  });
});
