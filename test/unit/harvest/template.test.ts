import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkDestination,
  FALLBACK_WORD,
  parseTemplate,
  renderTemplate,
  TEMPLATE_FIELDS,
  fixedFolder,
} from '../../../shared/harvest/template.js';
import type { TemplateField } from '../../../shared/harvest/template.js';

const values: Record<TemplateField, string> = {
  instrument: 'confocal-1',
  yyyy: '2024',
  mm: '06',
  dd: '01',
  relative_path: 'run3/plate2',
  user: 'alice',
  project: 'P-17',
  usage_event: '4711',
  filename: 'scan.tif',
  ark_blade: 'bcdf0123gh',
};

const SAME_NAME =
  'template must use at least one of {relative_path}, {filename} or {ark_blade}, or every file ' +
  'is given the same name (numbered (1), (2), ...), losing its own name and extension';

function render(template: string, overrides: Partial<Record<TemplateField, string>> = {}): string {
  // A field is rendered alone here ("{user}"), as one part of a whole template: the rule that a
  // whole template needs a field that differs per file does not apply to it.
  const parsed = parseTemplate(template);
  const problems = parsed.ok ? [] : parsed.problems.filter((problem) => problem !== SAME_NAME);
  if (problems.length) throw new Error(`${template}: ${problems.join('; ')}`);
  return renderTemplate(template, { ...values, ...overrides });
}

/** Both platforms' joins, so that "safe" is checked against real path semantics. */
function escapes(relative: string): boolean {
  const posix = path.posix.resolve('/srv/base', relative);
  const win = path.win32.resolve('D:\\srv\\base', relative);
  return !posix.startsWith('/srv/base/') || !win.startsWith('D:\\srv\\base\\');
}

describe('parseTemplate', () => {
  it('lists the fields used, once each, in order', () => {
    expect(parseTemplate('{instrument}/{yyyy}/{mm}/{instrument}-{filename}')).toEqual({
      ok: true,
      fields: ['instrument', 'yyyy', 'mm', 'filename'],
    });
    expect(parseTemplate('plain/{{literal}}/{filename}')).toEqual({
      ok: true,
      fields: ['filename'],
    });
  });

  it('exports every field name', () => {
    expect(TEMPLATE_FIELDS).toEqual([
      'instrument',
      'yyyy',
      'mm',
      'dd',
      'relative_path',
      'user',
      'project',
      'usage_event',
      'filename',
      'ark_blade',
    ]);
    expect(parseTemplate(TEMPLATE_FIELDS.map((field) => `{${field}}`).join('/'))).toMatchObject({
      ok: true,
    });
  });

  it.each([
    ['', 'template is empty'],
    ['  ', 'template is empty'],
    [
      '{instrument}/{foo}',
      'unknown field {foo}; fields are instrument, yyyy, mm, dd, relative_path, user, project, usage_event, filename, ark_blade',
    ],
    ['{instrument/{filename}', 'unclosed "{" at position 1; write "{{" for a literal brace'],
    ['{filename', 'unclosed "{" at position 1; write "{{" for a literal brace'],
    ['a}/{filename}', 'lone "}" at position 2; write "}}" for a literal brace'],
    ['../{filename}', 'template gives an unsafe path: climbs out of the storage location with ..'],
    ['/data/{filename}', 'template gives an unsafe path: starts with / or \\ (an absolute path)'],
    ['C:/data/{filename}', 'template gives an unsafe path: names a drive (C:)'],
    [
      'run:{filename}',
      'template gives a path Windows cannot hold: "run:x" holds :, which no name there may hold',
    ],
    [
      'raw?/{filename}',
      'template gives a path Windows cannot hold: "raw?" holds ?, which no name there may hold',
    ],
    [
      'raw./{filename}',
      'template gives a path Windows cannot hold: "raw." ends in a dot or a space, which no program opens',
    ],
    ['flat/{yyyy}', SAME_NAME],
    ['{instrument}/{yyyy}/{mm}/{dd}/{user}_{project}_{usage_event}', SAME_NAME],
  ])('rejects %j', (template, problem) => {
    expect(parseTemplate(template)).toEqual({ ok: false, problems: [problem] });
  });

  it('reports every problem at once', () => {
    const parsed = parseTemplate('{foo}/}/{bar');
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) expect(parsed.problems).toHaveLength(3);
    expect(parseTemplate('../{instrument}')).toEqual({
      ok: false,
      problems: [
        'template gives an unsafe path: climbs out of the storage location with ..',
        SAME_NAME,
      ],
    });
  });

  it('takes any one field that differs per file', () => {
    for (const template of ['{relative_path}', 'x/{filename}', '{yyyy}/{ark_blade}.dat']) {
      expect(parseTemplate(template).ok, template).toBe(true);
    }
  });
});

describe('renderTemplate', () => {
  it('fills in fields and literal braces', () => {
    expect(render('{instrument}/{yyyy}-{mm}-{dd}/{relative_path}/{filename}')).toBe(
      'confocal-1/2024-06-01/run3/plate2/scan.tif',
    );
    expect(render('{{x}}/{user}_{project}_{usage_event}/{ark_blade}')).toBe(
      '{x}/alice_P-17_4711/bcdf0123gh',
    );
    expect(render('{user}', { user: FALLBACK_WORD })).toBe('no-usage');
  });

  it.each([
    ['a/b', 'a_b'],
    ['a\\b', 'a_b'],
    ['C:', 'C_'],
    ['R&D: "x" <1|2>?*', 'R&D_ _x_ _1_2___'],
    ['x\0y', 'x_y'],
    ['tab\there\nnewline', 'tab_here_newline'],
    ['.', '_'],
    ['..', '_'],
    ['', '_'],
    ['. .', '_'],
    ['...', '_'],
    ['.hidden', '.hidden'],
    ['NUL', '_NUL'],
    ['com1.txt', '_com1.txt'],
    ['console', 'console'],
    ['Proj.', 'Proj_'],
    ['jdoe ', 'jdoe_'],
    ['run 1. . ', 'run 1_'],
    ['nul.', 'nul_'],
  ])('makes the value %j the single segment %j', (value, segment) => {
    expect(render('{user}', { user: value })).toBe(segment);
  });

  it('keeps the folders of relative_path', () => {
    // Folders are joined by "/" on every system; a backslash is part of a name (Linux).
    expect(render('{relative_path}/{filename}', { relative_path: 'a\\b/c' })).toBe(
      'a_b/c/scan.tif',
    );
    expect(render('x/{relative_path}/{filename}', { relative_path: '' })).toBe('x//scan.tif');
    expect(render('{relative_path}', { relative_path: './a/../b:c' })).toBe('a/_/b_c');
  });

  it('renders each template by its own pieces when many are rendered in turn', () => {
    // Parsed templates are kept (up to 100, then forgotten): 150 in turns, three rounds.
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 150; i++) {
        expect(render(`t${i}/{{{user}}}/{filename}`, { user: `u${round}` })).toBe(
          `t${i}/{u${round}}/scan.tif`,
        );
      }
    }
  });
});

describe('checkDestination', () => {
  it.each([
    ['a/b/c.tif', 'a/b/c.tif'],
    ['a\\b\\c.tif', 'a/b/c.tif'],
    ['a//b/./c.tif', 'a/b/c.tif'],
    ['./a/', 'a'],
    ['a/..b/c..', 'a/..b/c..'],
    ['a/ab:c', 'a/ab:c'],
  ])('accepts %j as %j', (relative, normalized) => {
    expect(checkDestination(relative)).toEqual({ ok: true, path: normalized });
  });

  it('cuts each name to 255 bytes, between characters, a file keeping its extension', () => {
    const bytes = (text: string): number => new TextEncoder().encode(text).length;
    // Text a template adds around a 254-byte {filename}: over what any disk takes.
    const file = `ARKBLADE_${'x'.repeat(250)}.tif`;
    const folder = 'é'.repeat(200); // 400 bytes
    const checked = checkDestination(`${folder}/sub/${file}`);
    if (!checked.ok) throw new Error(checked.reason);
    const [first, sub, last] = checked.path.split('/') as [string, string, string];
    expect([bytes(first), sub, bytes(last)]).toEqual([254, 'sub', 255]);
    expect(first).toBe('é'.repeat(127));
    expect(last).toBe(`ARKBLADE_${'x'.repeat(242)}.tif`);
    // A cut that would end a name in a space or a dot ends it in "_" (Windows opens neither).
    expect(checkDestination(`${'a'.repeat(254)} b/x.tif`)).toEqual({
      ok: true,
      path: `${'a'.repeat(254)}_/x.tif`,
    });
    // A name that fits is left as it is, a multi-byte one too.
    const fits = `${'ü'.repeat(125)}.tif`; // 254 bytes
    expect(checkDestination(fits)).toEqual({ ok: true, path: fits });
  });

  it.each([
    ['a/\0b', 'contains a NUL character'],
    ['/etc/passwd', 'starts with / or \\ (an absolute path)'],
    ['\\Windows', 'starts with / or \\ (an absolute path)'],
    ['\\\\server\\share\\x', 'starts with \\\\ (a UNC network path)'],
    ['//server/share/x', 'starts with \\\\ (a UNC network path)'],
    ['C:\\x', 'names a drive (C:)'],
    ['c:x', 'names a drive (c:)'],
    ['a/d:/x', 'names a drive (d:)'],
    ['a/b:c', 'names a drive (b:)'],
    ['..', 'climbs out of the storage location with ..'],
    ['a/../../b', 'climbs out of the storage location with ..'],
    ['a\\..\\..\\b', 'climbs out of the storage location with ..'],
    ['a/.. /b', 'climbs out of the storage location with ..'],
    ['a/. ./b', 'climbs out of the storage location with ..'],
    ['a/ /b', 'has a segment " " of only dots and spaces'],
    ['a/NUL', 'uses NUL, a device name on Windows'],
    ['a/con.txt', 'uses con, a device name on Windows'],
    ['', 'is empty'],
    ['./.', 'is empty'],
  ])('rejects %j: %s', (relative, reason) => {
    expect(checkDestination(relative)).toEqual({ ok: false, reason });
  });

  const nasty = fc.oneof(
    fc.string(),
    fc.string({ unit: 'binary' }),
    fc
      .array(fc.constantFrom('/', '\\', '.', '..', ':', 'C:', 'c', 'a', ' ', '\0', 'NUL', '//'), {
        maxLength: 12,
      })
      .map((parts) => parts.join('')),
  );

  it('never throws and never lets a path escape', () => {
    fc.assert(
      fc.property(nasty, (relative) => {
        const result = checkDestination(relative);
        if (!result.ok) return;
        const segments = result.path.split('/');
        expect(segments).not.toContain('..');
        expect(segments).not.toContain('');
        expect(result.path).not.toContain('\0');
        expect(result.path).not.toContain('\\');
        expect(result.path).not.toMatch(/^[\\/]/);
        expect(segments.some((segment) => /^[a-z]:/i.test(segment))).toBe(false);
        expect(escapes(result.path)).toBe(false);
        expect(escapes(relative)).toBe(false);
      }),
      { numRuns: 5000 },
    );
  });

  it('gives a safe path for any values in a valid template', () => {
    const template = fc
      .array(
        fc.oneof(
          fc.constantFrom(...TEMPLATE_FIELDS).map((field) => `{${field}}`),
          fc.constantFrom('/', '-', '_', 'x', '.', '{{', '}}'),
        ),
        { minLength: 1, maxLength: 8 },
      )
      .map((parts) => parts.join(''))
      .filter((text) => parseTemplate(text).ok);
    const anyValues = fc.record(
      Object.fromEntries(TEMPLATE_FIELDS.map((field) => [field, nasty])) as Record<
        TemplateField,
        typeof nasty
      >,
    );
    let accepted = 0;
    fc.assert(
      fc.property(template, anyValues, (text, fieldValues) => {
        const result = checkDestination(renderTemplate(text, fieldValues));
        if (!result.ok) return;
        accepted++;
        expect(result.path.split('/')).not.toContain('..');
        expect(escapes(result.path)).toBe(false);
      }),
      { numRuns: 3000 },
    );
    // Sanitized values should almost always render to an acceptable path.
    expect(accepted).toBeGreaterThan(2000);
  });
});

describe('fixedFolder', () => {
  it('is the folder every destination starts with, the known fields filled in', () => {
    expect(
      fixedFolder('{instrument}/{yyyy}/{mm}/{dd}/{relative_path}', { instrument: 'sem-2' }),
    ).toBe('sem-2/');
    expect(fixedFolder('raw/{instrument}/run-{yyyy}/{filename}', { instrument: 'sem-2' })).toBe(
      'raw/sem-2/',
    );
    expect(fixedFolder('archive/{filename}', {})).toBe('archive/');
    // The name cleaned as a rendering cleans it.
    expect(fixedFolder('{instrument}/{filename}', { instrument: 'R&D: "x"' })).toBe('R&D_ _x_/');
  });

  it('is null where the first folder already depends on the file or the day', () => {
    expect(fixedFolder('{relative_path}', { instrument: 'sem-2' })).toBeNull();
    expect(fixedFolder('{yyyy}/{instrument}/{filename}', { instrument: 'sem-2' })).toBeNull();
    expect(fixedFolder('{instrument}-{user}/{filename}', { instrument: 'sem-2' })).toBeNull();
    expect(fixedFolder('../{filename}', {})).toBeNull();
  });

  it('is a folder of every path the template renders (property)', () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9 ._-]{1,12}$/);
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...TEMPLATE_FIELDS), { minLength: 1, maxLength: 4 }),
        fc.array(fc.constantFrom('/', '-', '_', 'x', '.', '{{', '}}'), { maxLength: 4 }),
        fc.record({
          instrument: segment,
          yyyy: fc.integer({ min: 1000, max: 9999 }).map(String),
          mm: fc.integer({ min: 1, max: 12 }).map((n) => String(n).padStart(2, '0')),
          dd: fc.integer({ min: 1, max: 31 }).map((n) => String(n).padStart(2, '0')),
          relative_path: fc.array(segment, { minLength: 1, maxLength: 3 }).map((p) => p.join('/')),
          user: segment,
          project: segment,
          usage_event: segment,
          filename: segment,
          ark_blade: fc.stringMatching(/^[0-9bcdfghjkmnpqrstvwxz]{1,10}$/),
        }),
        (fields, literals, values) => {
          const template = fields
            .map((f, i) => `${literals[i] ?? ''}{${f}}`)
            .join('/')
            .concat('/{filename}');
          const rendered = checkDestination(renderTemplate(template, values));
          const folder = fixedFolder(template, { instrument: values.instrument });
          if (!rendered.ok || folder === null) return;
          expect(rendered.path.startsWith(folder)).toBe(true);
        },
      ),
    );
  });
});
