// Destination templates: `{field}` placeholders, `{{` and `}}` for literal braces.

export const TEMPLATE_FIELDS = [
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
] as const;

/** Where a file goes when its instrument names no template. */
export const DEFAULT_TEMPLATE = '{instrument}/{yyyy}/{mm}/{dd}/{relative_path}';

export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/** Stands in for user, project and usage_event when no usage was active. */
export const FALLBACK_WORD = 'no-usage';

export type ParsedTemplate =
  { ok: true; fields: TemplateField[] } | { ok: false; problems: string[] };

export type DestinationCheck = { ok: true; path: string } | { ok: false; reason: string };

type Piece = { kind: 'text'; text: string } | { kind: 'field'; name: string; position: number };

function isField(name: string): name is TemplateField {
  return (TEMPLATE_FIELDS as readonly string[]).includes(name);
}

/** Splits a template; problems are collected rather than thrown so all can be shown at once. */
function scan(template: string): { pieces: Piece[]; problems: string[] } {
  const pieces: Piece[] = [];
  const problems: string[] = [];
  let text = '';
  let i = 0;
  while (i < template.length) {
    const char = template[i];
    const next = template[i + 1];
    if ((char === '{' && next === '{') || (char === '}' && next === '}')) {
      text += char;
      i += 2;
    } else if (char === '}') {
      problems.push(`lone "}" at position ${i + 1}; write "}}" for a literal brace`);
      text += char;
      i++;
    } else if (char === '{') {
      let end = i + 1;
      while (end < template.length && template[end] !== '}' && template[end] !== '{') end++;
      if (template[end] !== '}') {
        problems.push(`unclosed "{" at position ${i + 1}; write "{{" for a literal brace`);
        text += char;
        i++;
        continue;
      }
      if (text !== '') pieces.push({ kind: 'text', text });
      text = '';
      pieces.push({ kind: 'field', name: template.slice(i + 1, end), position: i + 1 });
      i = end + 1;
    } else {
      text += char;
      i++;
    }
  }
  if (text !== '') pieces.push({ kind: 'text', text });
  return { pieces, problems };
}

/**
 * The fields that differ from one file to the next (the problem in parseTemplate names them);
 * the rest (instrument, date, usage) are the same for every file of a day or a usage.
 */
const PER_FILE_FIELDS: readonly TemplateField[] = ['relative_path', 'filename', 'ark_blade'];

const SAMPLE_VALUES = Object.fromEntries(TEMPLATE_FIELDS.map((field) => [field, 'x'])) as Record<
  TemplateField,
  string
>;

export function parseTemplate(template: string): ParsedTemplate {
  if (template.trim() === '') return { ok: false, problems: ['template is empty'] };
  const { pieces, problems } = scan(template);
  const fields: TemplateField[] = [];
  for (const piece of pieces) {
    if (piece.kind !== 'field') continue;
    if (!isField(piece.name)) {
      problems.push(`unknown field {${piece.name}}; fields are ${TEMPLATE_FIELDS.join(', ')}`);
    } else if (!fields.includes(piece.name)) {
      fields.push(piece.name);
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  // Values are sanitized, so only the literal text can make a path escape; catching that here
  // turns a per-file harvest failure into a configuration error.
  const sampled = renderTemplate(template, SAMPLE_VALUES);
  const sample = checkDestination(sampled);
  if (!sample.ok) problems.push(`template gives an unsafe path: ${sample.reason}`);
  const windows = sample.ok ? windowsNameProblem(sample.path) : null;
  if (windows !== null) problems.push(`template gives a path Windows cannot hold: ${windows}`);
  if (!fields.some((field) => PER_FILE_FIELDS.includes(field))) {
    problems.push(
      'template must use at least one of {relative_path}, {filename} or {ark_blade}, or ' +
        'every file is given the same name (numbered (1), (2), ...), losing its own name and ' +
        'extension',
    );
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, fields };
}

// Windows opens these as devices in any folder, with or without an extension.
const WINDOWS_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³]) *(\..*)?$/i;
// Control characters, separators, and what Windows allows in no name (NTFS, SMB shares): a
// project called "R&D: Q?" must make a folder that a Windows station or share can hold.
// eslint-disable-next-line no-control-regex -- control characters are exactly what is removed
const UNSAFE_IN_SEGMENT = /[\u0000-\u001f\u007f-\u009f/\\:<>"|?*]/g;

function sanitizeSegment(value: string): string {
  const cleaned = value.replace(UNSAFE_IN_SEGMENT, '_');
  // Windows trims trailing dots and spaces, so ". ." or "... " could turn into "." or "..".
  if (/^[. ]*$/.test(cleaned)) return '_';
  // And a name that ends in them (a project "Proj.", a user "jdoe "), written as it is
  // through the long-path prefix Node uses, is one that Explorer and most programs cannot
  // open or delete.
  const ended = cleaned.replace(/[. ]+$/, '_');
  return WINDOWS_DEVICE.test(ended) ? `_${ended}` : ended;
}

/**
 * A relative path as the station records it, its folders joined by "/" on every system
 * (discover.ts relativeTo): a backslash is part of a name there (Linux allows one), made "_" as
 * in {filename}, not a folder, or "a\\b.txt" would be placed where "a/b.txt" goes.
 */
function sanitizeRelativePath(value: string): string {
  return value
    .split('/')
    .filter((segment) => segment !== '' && segment !== '.')
    .map(sanitizeSegment)
    .join('/');
}

const scanned = new Map<string, Piece[]>();

/**
 * Assumes `parseTemplate(template).ok`; anything unparsable is kept as literal text. Values are
 * made into single path segments, except `relative_path`, which keeps its folders.
 */
export function renderTemplate(template: string, values: Record<TemplateField, string>): string {
  let pieces = scanned.get(template);
  if (!pieces) {
    // A harvest renders one instrument's template for every file: parsed once, kept.
    if (scanned.size >= 100) scanned.clear();
    pieces = scan(template).pieces;
    scanned.set(template, pieces);
  }
  return pieces
    .map((piece) => {
      if (piece.kind === 'text') return piece.text;
      if (!isField(piece.name)) return `{${piece.name}}`;
      const value = values[piece.name];
      return piece.name === 'relative_path' ? sanitizeRelativePath(value) : sanitizeSegment(value);
    })
    .join('');
}

/** Most file systems take names of up to 255 bytes (in UTF-8 on Linux and macOS). */
export const NAME_MAX_BYTES = 255;

/** The longest start of `text` that is at most `bytes` long in UTF-8, cut between characters. */
export function fitBytes(text: string, bytes: number): string {
  let used = 0;
  let end = 0;
  for (const char of text) {
    used += utf8Length(char);
    if (used > bytes) break;
    end += char.length;
  }
  return text.slice(0, end);
}

function utf8Length(char: string): number {
  const code = char.codePointAt(0) ?? 0;
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/** The length of `text` in UTF-8 (Buffer.byteLength, where the renderer has no Buffer). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (const char of text) bytes += utf8Length(char);
  return bytes;
}

/**
 * A name cut to NAME_MAX_BYTES, its extension kept (a file's; a folder's is cut as the rest):
 * text a template adds around `{filename}` must not make a long name one no disk takes.
 */
function fitName(name: string, file: boolean): string {
  // A UTF-16 unit is at most 3 bytes in UTF-8 (a pair, 4): most names are known to fit at once.
  if (name.length * 3 <= NAME_MAX_BYTES) return name;
  if (utf8Bytes(name) <= NAME_MAX_BYTES) return name;
  const dot = file ? name.lastIndexOf('.') : -1;
  let ext = dot > 0 ? name.slice(dot) : '';
  if (utf8Bytes(ext) > NAME_MAX_BYTES / 2) ext = '';
  // A cut may end the name in a dot or a space, which Windows cannot open (sanitizeSegment).
  const stem = fitBytes(name.slice(0, name.length - ext.length), NAME_MAX_BYTES - utf8Bytes(ext));
  return stem.replace(/[. ]+$/, '_') + ext;
}

/**
 * Why a destination (as checkDestination gives it) holds a name that Windows or an SMB share
 * cannot, or null: one of `< > : " | ? *` ("run:x.tif" would be written there as a hidden data
 * stream of a file "run", not as a file), or a name ending in a dot or a space (written as it
 * is through the long-path prefix Node uses, and then one that Explorer and most programs
 * cannot open). Values are made safe already (sanitizeSegment): what is left is a template's
 * own text. Templates are refused with it on every system, where a station may be a Windows
 * one or write to a share; a transfer fails with it on Windows only, where a template stored
 * before this rule would do harm.
 */
export function windowsNameProblem(relative: string): string | null {
  for (const name of relative.split('/')) {
    const unsafe = /[<>:"|?*]/.exec(name);
    if (unsafe !== null) return `"${name}" holds ${unsafe[0]}, which no name there may hold`;
    if (/[. ]$/.test(name)) return `"${name}" ends in a dot or a space, which no program opens`;
  }
  return null;
}

/**
 * Checks a rendered path that will be joined onto a storage base path, as if on Linux or Windows
 * (so '\' is a separator too), and normalizes it to '/'-separated segments, each cut to
 * NAME_MAX_BYTES.
 */
export function checkDestination(relative: string): DestinationCheck {
  if (relative.includes('\0')) return { ok: false, reason: 'contains a NUL character' };
  if (/^[\\/]{2}/.test(relative)) {
    return { ok: false, reason: 'starts with \\\\ (a UNC network path)' };
  }
  if (/^[\\/]/.test(relative)) {
    return { ok: false, reason: 'starts with / or \\ (an absolute path)' };
  }
  const segments = relative.split(/[\\/]/);
  const kept: string[] = [];
  for (const segment of segments) {
    const drive = /^[A-Za-z]:/.exec(segment);
    if (drive !== null) return { ok: false, reason: `names a drive (${drive[0]})` };
    if (segment === '' || segment === '.') continue;
    if (/^[. ]+$/.test(segment)) {
      // Windows trims trailing dots and spaces, so ".. " and ". ." must count as climbing.
      return segment.includes('..') || segment.replace(/ /g, '') === '..'
        ? { ok: false, reason: 'climbs out of the storage location with ..' }
        : { ok: false, reason: `has a segment "${segment}" of only dots and spaces` };
    }
    const device = WINDOWS_DEVICE.exec(segment);
    if (device !== null) {
      return { ok: false, reason: `uses ${device[1]}, a device name on Windows` };
    }
    kept.push(segment);
  }
  if (kept.length === 0) return { ok: false, reason: 'is empty' };
  return {
    ok: true,
    path: kept.map((segment, i) => fitName(segment, i === kept.length - 1)).join('/'),
  };
}

/** Stand-ins for the fields not known while a template is rendered: private-use letters. */
const TOKEN_BASE = 0xe000;

/**
 * The folder that every destination of `template` starts with, given the fields in `known`
 * (`{instrument}/{yyyy}/...` with instrument "sem-2": "sem-2/"); null when the template's
 * first folder already depends on the file (`{relative_path}`, `{yyyy}/...`). What the server
 * holds to be an instrument's own in a shared storage location (uploads/routes.ts).
 */
export function fixedFolder(
  template: string,
  known: Partial<Record<TemplateField, string>>,
): string | null {
  const values = Object.fromEntries(
    TEMPLATE_FIELDS.map((field, i) => [field, known[field] ?? String.fromCharCode(TOKEN_BASE + i)]),
  ) as Record<TemplateField, string>;
  const rendered = checkDestination(renderTemplate(template, values));
  if (!rendered.ok) return null;
  const firstToken = [...rendered.path].findIndex((char) => {
    const index = char.charCodeAt(0) - TOKEN_BASE;
    return index >= 0 && index < TEMPLATE_FIELDS.length;
  });
  const fixed = firstToken < 0 ? rendered.path : [...rendered.path].slice(0, firstToken).join('');
  const folder = fixed.slice(0, fixed.lastIndexOf('/') + 1);
  return folder === '' ? null : folder;
}
