/**
 * What the commands share: the usage error, the checks of their flags, the JSON files they are
 * given, and the forms of their output lines.
 */
import { scanJson } from '../../shared/metadata/jsonText.js';
import { pathText } from '../../shared/wellFormed.js';
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import { AppError } from '../core/util/errors.js';

export class UsageError extends Error {}

/**
 * The --port value, or `fallback` without one. Digits only: Number() would take 0x50, 1e3 and
 * an empty value as ports (80, 1000, 0).
 */
export function portOf(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const port = Number(value);
  if (!/^\d{1,5}$/.test(value) || port > 65535) {
    throw new UsageError('--port must be a whole number from 0 to 65535');
  }
  return port;
}

/**
 * A JSON file's text. JSON is UTF-8 (RFC 8259): a file in another encoding (Latin-1 from an
 * old editor) is refused, naming the line, instead of read with its letters replaced by U+FFFD
 * and written back so. The byte order mark Windows editors (Notepad, PowerShell's UTF8
 * encoding) write first is dropped: JSON.parse would refuse it as an invisible character.
 */
export function readText(file: string): string {
  const bytes = readFileSync(file);
  const text = bytes.toString('utf8');
  if (!isUtf8(bytes)) {
    const bad = text.indexOf('\uFFFD');
    const line = text.slice(0, Math.max(bad, 0)).split('\n').length;
    throw new Error(`is not UTF-8 text (line ${line}); save it as UTF-8`);
  }
  return text.replace(/^\uFEFF/, '');
}

export function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readText(file);
  } catch (error) {
    throw new AppError('bad_request', `${what} ${file}: ${(error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch (error) {
    throw new AppError(
      'bad_request',
      `${what} ${file} is not valid JSON: ${(error as Error).message}`,
    );
  }
  // JSON.parse keeps the last of a key written twice, and loses the first without a word (a
  // tool's question list written twice, the second one empty).
  const scan = scanJson(text);
  if (scan.ok && scan.duplicates.length > 0) {
    const lines = scan.duplicates.map(
      (d) => `${pathText(d.path, '(top)')}: is written more than once; keep one`,
    );
    throw new AppError('bad_request', `${what} ${file}:\n${lines.join('\n')}`);
  }
  return value;
}

/** "1 field", "12 fields". */
export function n(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function need(value: string | undefined, flag: string): string {
  if (!value) throw new UsageError(`${flag} is required`);
  return value;
}

/**
 * Text for one tab-separated field of a line: a file name may hold a tab or a newline (Linux
 * allows both), which would split the record for a script reading line by line. They are
 * written as `\t`, `\n` and `\r` (a Windows path keeps its backslashes as they are); --json
 * gives the text as it is.
 */
export function oneField(text: string): string {
  return text.replace(/[\t\n\r]/g, (c) => (c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
