import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compileFilter,
  compileGlob,
  unmatchablePatterns,
  DEFAULT_EXCLUDE,
  platformGlobOptions,
} from '../../../shared/harvest/glob.js';
import type { GlobOptions } from '../../../shared/harvest/glob.js';

function glob(pattern: string, options?: GlobOptions): (relPath: string) => boolean {
  const compiled = compileGlob(pattern, options);
  if (!compiled.ok) throw new Error(`${pattern}: ${compiled.message}`);
  return (relPath) => compiled.test(relPath);
}

function globError(pattern: string): string {
  const compiled = compileGlob(pattern);
  if (compiled.ok) throw new Error(`${pattern} compiled`);
  return compiled.message;
}

type Row = [pattern: string, path: string, matches: boolean];

const syntax: Row[] = [
  // `*`: any run of characters within one segment
  ['*.tif', 'image.tif', true],
  ['*.tif', 'image.tiff', false],
  ['*.tif', '.tif', true],
  ['a*b', 'ab', true],
  ['a*b', 'axxb', true],
  ['raw/*', 'raw/a.tif', true],
  ['raw/*', 'raw/sub/a.tif', false],
  ['raw/*.tif', 'raw/x/y.tif', false],
  // `?`: exactly one character, never '/'
  ['scan?.tif', 'scan1.tif', true],
  ['scan?.tif', 'scan.tif', false],
  ['scan?.tif', 'scan12.tif', false],
  ['a?b', 'a/b', false],
  ['?', 'é', true],
  ['?', '😀', true],
  // `**` as a whole segment: zero or more segments
  ['raw/**/*.tif', 'raw/a.tif', true],
  ['raw/**/*.tif', 'raw/x/y/z/a.tif', true],
  ['raw/**/*.tif', 'other/raw/a.tif', false],
  ['**/*.tif', 'a.tif', true],
  ['**/*.tif', 'a/b/c.tif', true],
  ['raw/**', 'raw/a/b.tif', true],
  ['raw/**', 'raw', true],
  ['raw/**', 'rawer/a', false],
  ['a/**/b/**/c', 'a/b/c', true],
  ['a/**/b/**/c', 'a/x/b/y/z/c', true],
  ['a/**/b/**/c', 'a/x/y/c', false],
  ['a/**/**/b', 'a/b', true],
  ['**', 'anything/at/all', true],
  // `**` inside a segment is just `*`
  ['a**b.tif', 'axxb.tif', true],
  ['a**b.tif', 'a/b.tif', false],
  // classes
  ['[abc].tif', 'b.tif', true],
  ['[abc].tif', 'd.tif', false],
  ['[a-c]x', 'bx', true],
  ['[a-c]x', 'dx', false],
  ['[!abc]x', 'dx', true],
  ['[!abc]x', 'ax', false],
  ['[^abc]x', 'dx', true],
  ['[^abc]x', 'cx', false],
  ['a[!x]b', 'a/b', false],
  ['a[%-0]b', 'a/b', false],
  ['[]]', ']', true],
  ['[!]]', 'a', true],
  ['[!]]', ']', false],
  ['[a-]', '-', true],
  ['[\\]x]', ']', true],
  ['[.]*', '.hidden', true],
  ['[*?]', '*', true],
  ['[*?]', 'a', false],
  // braces, nested, empty options
  ['*.{tif,tiff}', 'a.tif', true],
  ['*.{tif,tiff}', 'a.tiff', true],
  ['*.{tif,tiff}', 'a.png', false],
  ['{a,b{c,d}}.x', 'bd.x', true],
  ['{a,b{c,d}}.x', 'b.x', false],
  ['scan{,-raw}.tif', 'scan.tif', true],
  ['scan{,-raw}.tif', 'scan-raw.tif', true],
  ['{raw,processed}/*.tif', 'processed/a.tif', true],
  ['{raw,processed}/*.tif', 'x/raw/a.tif', false],
  ['*{abcd,b}*cd', 'abcd', true],
  // escapes and characters that mean something in a RegExp
  ['\\*.tif', '*.tif', true],
  ['\\*.tif', 'a.tif', false],
  ['a\\?', 'a?', true],
  ['a\\?', 'ab', false],
  ['\\[x]', '[x]', true],
  ['\\{a,b}', '{a,b}', true],
  ['a,b}', 'a,b}', true],
  ['(x)+$^|.', '(x)+$^|.', true],
  ['(x)+$^|.', 'xx', false],
  ['a.b', 'axb', false],
  ['~$*', '~$report.docx', true],
];

const anchoring: Row[] = [
  ['*.tif', 'a/b/c/image.tif', true],
  ['image.tif', 'deep/in/image.tif', true],
  ['image.tif', 'deep/in/image.tif.bak', false],
  ['in/image.tif', 'in/image.tif', true],
  ['in/image.tif', 'deep/in/image.tif', false],
  ['/image.tif', 'image.tif', true],
  ['/image.tif', 'a/image.tif', false],
  ['/raw/*.tif', 'raw/a.tif', true],
  ['raw/', 'raw', true],
  ['a//b', 'a/b', true],
];

describe('compileGlob', () => {
  it.each(syntax)('%s against %s -> %s', (pattern, path, matches) => {
    expect(glob(pattern)(path)).toBe(matches);
  });

  it.each(anchoring)('basename vs anchored: %s against %s -> %s', (pattern, path, matches) => {
    expect(glob(pattern)(path)).toBe(matches);
  });

  it('matches case-sensitively unless asked not to', () => {
    expect(glob('*.TIF')('a.tif')).toBe(false);
    expect(glob('*.TIF', { caseInsensitive: true })('a.tif')).toBe(true);
    expect(glob('Raw/[A-C]*.{Tif,Png}', { caseInsensitive: true })('RAW/b1.PNG')).toBe(true);
    expect(glob('thumbs.db', { caseInsensitive: true })('x/Thumbs.DB')).toBe(true);
  });

  it('ignores case on the platforms whose file systems do, and only there', () => {
    const filter = (platform: string, include: string[] = []) => {
      const compiled = compileFilter(
        { include, exclude: [...DEFAULT_EXCLUDE] },
        platformGlobOptions(platform),
      );
      if (!compiled.ok) throw new Error('does not compile');
      return compiled;
    };
    for (const platform of ['win32', 'darwin']) {
      expect(filter(platform, ['*.tif']).accepts('run/SCAN.TIF')).toBe(true);
      expect(filter(platform).accepts('run/~WRL0001.TMP')).toBe(false);
      expect(filter(platform).accepts('run/THUMBS.DB')).toBe(false);
    }
    expect(filter('linux', ['*.tif']).accepts('run/SCAN.TIF')).toBe(false);
    expect(filter('linux', ['*.tif']).accepts('run/scan.tif')).toBe(true);
    expect(filter('linux').accepts('run/~WRL0001.TMP')).toBe(true);
  });

  it.each([
    ['', 'empty pattern'],
    ['ab[c', 'unclosed "[" at position 3'],
    ['[]', 'unclosed "[" at position 1'],
    ['a{b,c', 'unclosed "{" at position 2'],
    ['{a,{b}', 'unclosed "{" at position 1'],
    ['abc\\', 'trailing backslash at position 4'],
    ['[a\\', 'trailing backslash at position 3'],
    ['a\0b', 'NUL character at position 2'],
    ['[z-a]', 'range "z-a" at position 2 runs backwards'],
    ['/', 'pattern names nothing besides "/"'],
    ['{a,b}'.repeat(9), 'braces give more than 256 alternatives'],
  ])('rejects %j: %s', (pattern, message) => {
    expect(globError(pattern)).toBe(message);
  });

  it('finishes fast on patterns that make naive backtracking explode', () => {
    const long = 'a'.repeat(50_000);
    const deep = 'a/'.repeat(20_000);
    // [pattern, a long path it must reject, a long path it must match]
    const cases: [string, string, string][] = [
      ['*a*a*a*a*a*a*b', long, `${long}b`],
      ['*a*a*a*a*a*a*b', `x/${long}`, `x/${long}b`],
      ['**/*a*a*a*a*a*a*b', `${deep}${long}`, `${deep}${long}b`],
      ['a/**/a/**/a/**/a/**/b', `${deep}a`, `${deep}b`],
      ['*[a-c]?*[!x]*a*a*a*b', long, `${long}b`],
      ['{*a*a*a*b,*a*a*c,*a*a*a*a*d}', long, `${long}d`],
    ];
    const started = performance.now();
    for (const [pattern, rejected, matched] of cases) {
      expect(glob(pattern)(rejected)).toBe(false);
      expect(glob(pattern)(matched)).toBe(true);
    }
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});

// ---- a slow but obviously correct matcher, to check the atomic RegExp translation ----

type RefToken = 'a' | 'b' | '*' | '?' | '[ab]' | '[!a]' | '{a,bb}';

function segmentMatches(tokens: RefToken[], text: string): boolean {
  if (tokens.length === 0) return text === '';
  const [head, ...rest] = tokens;
  if (head === '*') {
    for (let i = 0; i <= text.length; i++) if (segmentMatches(rest, text.slice(i))) return true;
    return false;
  }
  if (head === '{a,bb}') {
    return ['a', 'bb'].some(
      (alt) => text.startsWith(alt) && segmentMatches(rest, text.slice(alt.length)),
    );
  }
  if (text === '') return false;
  const char = text[0];
  const ok =
    head === '?' ||
    (head === '[ab]' && (char === 'a' || char === 'b')) ||
    (head === '[!a]' && char !== 'a') ||
    head === char;
  return ok && segmentMatches(rest, text.slice(1));
}

function referenceMatch(segments: RefToken[][], path: string[]): boolean {
  if (segments.length === 0) return path.length === 0;
  const [head, ...rest] = segments;
  const globstar = head.length === 2 && head.every((token) => token === '*');
  if (globstar) {
    for (let i = 0; i <= path.length; i++) if (referenceMatch(rest, path.slice(i))) return true;
    return false;
  }
  return path.length > 0 && segmentMatches(head, path[0]) && referenceMatch(rest, path.slice(1));
}

describe('compileGlob against a reference matcher', () => {
  const token = fc.constantFrom<RefToken>('a', 'b', '*', '*', '*', '?', '[ab]', '[!a]', '{a,bb}');
  const segment = fc.array(token, { minLength: 1, maxLength: 6 });
  const patternSegments = fc.array(segment, { minLength: 1, maxLength: 4 });
  const path = fc.array(fc.stringMatching(/^[ab]{0,6}$/), { minLength: 1, maxLength: 5 });

  it('agrees on random patterns and paths', () => {
    let matched = 0;
    fc.assert(
      fc.property(patternSegments, path, (segments, parts) => {
        const pattern = segments.map((tokens) => tokens.join('')).join('/');
        // Nine or more braces exceed the alternatives limit, which has its own test.
        fc.pre(pattern.split('{').length <= 9);
        const effective =
          segments.length === 1 ? [['*', '*'] as RefToken[], ...segments] : segments;
        const expected = referenceMatch(effective, parts);
        if (expected) matched++;
        expect(glob(pattern)(parts.join('/'))).toBe(expected);
      }),
      { numRuns: 5000 },
    );
    // Guards against a generator that only ever produces non-matches.
    expect(matched).toBeGreaterThan(250);
  });
});

describe('compileFilter', () => {
  const defaults = compileFilter({ include: [], exclude: [...DEFAULT_EXCLUDE] });
  if (!defaults.ok) throw new Error('defaults must compile');

  it.each([
    ['.DS_Store', false],
    ['a/.DS_Store', false],
    ['Thumbs.db', false],
    ['~$report.docx', false],
    ['run.tmp', false],
    ['.scan.tif.ab12.partial', false],
    ['scan.tif.partial', false],
    ['a/.hidden/x.tif', false],
    ['.git/config', false],
    ['a/b/image.tif', true],
    ['image.tif', true],
    ['notes.tmp.txt', true],
    ['report~$.docx', true],
  ])('default excludes: %s accepted %s', (path, accepted) => {
    expect(defaults.accepts(path)).toBe(accepted);
  });

  it('skips hidden folders entirely with the defaults', () => {
    expect(defaults.skipsDirectory('.git')).toBe(true);
    expect(defaults.skipsDirectory('a/.cache')).toBe(true);
    expect(defaults.skipsDirectory('a/b')).toBe(false);
    expect(defaults.skipsDirectory('')).toBe(false);
  });

  it('accepts a file that matches an include and no exclude', () => {
    const filter = compileFilter({ include: ['*.tif', 'meta/*.json'], exclude: ['*_thumb.tif'] });
    if (!filter.ok) throw new Error('must compile');
    expect(filter.accepts('a/b/scan.tif')).toBe(true);
    expect(filter.accepts('meta/run.json')).toBe(true);
    expect(filter.accepts('a/meta/run.json')).toBe(false);
    expect(filter.accepts('a/scan_thumb.tif')).toBe(false);
    expect(filter.accepts('notes.txt')).toBe(false);
  });

  it('lets an anchored exclude cover everything below the folder it matches', () => {
    const filter = compileFilter({ include: [], exclude: ['raw/tmp', 'cache/*'] });
    if (!filter.ok) throw new Error('must compile');
    expect(filter.accepts('raw/tmp')).toBe(false);
    expect(filter.accepts('raw/tmp/a/b.tif')).toBe(false);
    expect(filter.accepts('x/raw/tmp/b.tif')).toBe(true);
    expect(filter.accepts('raw/tmpfile')).toBe(true);
    expect(filter.accepts('cache/a/b.tif')).toBe(false);
    expect(filter.accepts('cache')).toBe(true);
    expect(filter.skipsDirectory('raw/tmp')).toBe(true);
    expect(filter.skipsDirectory('raw/tmp/deeper')).toBe(true);
    expect(filter.skipsDirectory('raw')).toBe(false);
    expect(filter.skipsDirectory('cache')).toBe(true);
  });

  it.each<[string[], string, boolean]>([
    [['raw/**'], 'raw', true],
    [['raw/**/*'], 'raw', true],
    [['raw/*/*'], 'raw', false],
    [['raw/*.tif'], 'raw', false],
    [['**/scratch'], 'a/b/scratch', true],
    [['**/scratch/*.tmp'], 'a/scratch', false],
    [['*'], 'a', true],
    [['*'], '', true],
    [['*.tmp'], 'dir.tmp', true],
    [['a/b'], 'a', false],
    [['{raw,tmp}/**'], 'tmp', true],
  ])('exclude %j skips directory %j: %s', (exclude, dir, skipped) => {
    const filter = compileFilter({ include: [], exclude });
    if (!filter.ok) throw new Error('must compile');
    expect(filter.skipsDirectory(dir)).toBe(skipped);
  });

  it('never skips a directory that holds an accepted file', () => {
    const excludes = [
      'raw/**',
      'raw/**/*',
      'raw/*/*',
      'raw/*.tif',
      '*.tmp',
      'a/b',
      '[ab]/*',
      '*/x',
    ];
    const dirs = ['', 'raw', 'raw/x', 'a', 'a/b', 'b', 'dir.tmp', 'q/x'];
    const names = ['f.tif', 'x', 'y.tmp', 'b', 'raw/x/f'];
    for (const exclude of excludes) {
      const filter = compileFilter({ include: [], exclude: [exclude] });
      if (!filter.ok) throw new Error('must compile');
      for (const dir of dirs) {
        if (!filter.skipsDirectory(dir)) continue;
        for (const name of names) {
          const path = dir === '' ? name : `${dir}/${name}`;
          expect(filter.accepts(path), `${exclude} skips ${dir} but accepts ${path}`).toBe(false);
        }
      }
    }
  });

  it('reports every bad pattern with its field and index', () => {
    const filter = compileFilter({ include: ['*.tif', 'a[b'], exclude: ['ok', '', 'x{'] });
    expect(filter).toEqual({
      ok: false,
      problems: [
        { field: 'include', index: 1, message: 'unclosed "[" at position 2' },
        { field: 'exclude', index: 1, message: 'empty pattern' },
        { field: 'exclude', index: 2, message: 'unclosed "{" at position 2' },
      ],
    });
  });

  it('names patterns that compile but can match nothing: . or .. in them, an include of folders', () => {
    // Each was taken without a word, and the instrument harvested nothing (or all it excluded).
    const patterns = {
      include: [
        './sub/*.dat',
        'sub/',
        'a/../b/*.dat',
        '/sub/*.dat',
        'sub/**',
        '*.tif',
        'raw/**/',
        'raw/*/',
      ],
      exclude: ['sub/', './tmp', '/cache'],
    };
    expect(compileFilter(patterns).ok).toBe(true);
    const below = 'paths are matched as they lie below the watched folder, with no . or .. in them';
    expect(unmatchablePatterns(patterns)).toEqual([
      { field: 'include', index: 0, message: `${below} (give sub/*.dat)` },
      {
        field: 'include',
        index: 1,
        message:
          'ends with /, so it names folders, and it is matched against files: give sub/** for every file below them',
      },
      { field: 'include', index: 2, message: `${below} (leave them out)` },
      { field: 'exclude', index: 1, message: `${below} (give tmp)` },
    ]);
    // As they are taken: no file matches them.
    const filter = compileFilter({ include: patterns.include.slice(0, 3), exclude: [] });
    if (!filter.ok) throw new Error('must compile');
    for (const path of ['sub/a.dat', 'b/a.dat', 'a/b/a.dat', 'a.dat']) {
      expect(filter.accepts(path), path).toBe(false);
    }
    // While a / after a * takes the files below: not refused.
    const starred = compileFilter({ include: ['raw/**/', 'raw/*/'], exclude: [] });
    if (!starred.ok) throw new Error('must compile');
    expect(starred.accepts('raw/a.tif')).toBe(true);
  });

  it('applies the case-insensitive option to both lists', () => {
    const filter = compileFilter(
      { include: ['*.TIF'], exclude: ['TMP'] },
      { caseInsensitive: true },
    );
    if (!filter.ok) throw new Error('must compile');
    expect(filter.accepts('a/b.tif')).toBe(true);
    expect(filter.accepts('tmp/b.tif')).toBe(false);
  });
});
