import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sniffMime } from '../../../shared/harvest/mime.js';

function bytes(...parts: (string | number[])[]): Uint8Array {
  const out: number[] = [];
  for (const part of parts) {
    if (typeof part === 'string') out.push(...Array.from(part, (char) => char.charCodeAt(0)));
    else out.push(...part);
  }
  return Uint8Array.from(out);
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

function withPrefix(offset: number, signature: Uint8Array, fill = 0): Uint8Array {
  const head = new Uint8Array(offset + signature.length + 16).fill(fill);
  head.set(signature, offset);
  return head;
}

const bmpHeader = bytes('BM', [0x46, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0, 1, 0]);

const table: [string, Uint8Array, string][] = [
  ['empty', new Uint8Array(0), 'application/x-empty'],
  ['PNG', bytes([0x89], 'PNG\r\n\x1a\n', [0, 0, 0, 13]), 'image/png'],
  ['JPEG', bytes([0xff, 0xd8, 0xff, 0xe0, 0, 16], 'JFIF'), 'image/jpeg'],
  ['GIF87a', bytes('GIF87a', [1, 0]), 'image/gif'],
  ['GIF89a', bytes('GIF89a', [1, 0]), 'image/gif'],
  ['TIFF little-endian', bytes('II*\0', [8, 0, 0, 0]), 'image/tiff'],
  ['TIFF big-endian', bytes('MM\0*', [0, 0, 0, 8]), 'image/tiff'],
  ['BigTIFF', bytes('II+\0', [8, 0, 0, 0]), 'image/tiff'],
  ['BMP', bmpHeader, 'image/bmp'],
  ['PDF', bytes('%PDF-1.7\n%\xe2\xe3\xcf\xd3'), 'application/pdf'],
  ['ZIP', bytes('PK\x03\x04', [20, 0, 0, 0]), 'application/zip'],
  ['empty ZIP', bytes('PK\x05\x06', new Array<number>(18).fill(0)), 'application/zip'],
  ['gzip', bytes([0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0]), 'application/gzip'],
  ['bzip2', bytes('BZh91AY&SY'), 'application/x-bzip2'],
  ['xz', bytes([0xfd], '7zXZ\0', [0, 4]), 'application/x-xz'],
  ['zstd', bytes([0x28, 0xb5, 0x2f, 0xfd, 0x24]), 'application/zstd'],
  ['7z', bytes([0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c, 0, 4]), 'application/x-7z-compressed'],
  ['HDF5', bytes([0x89], 'HDF\r\n\x1a\n', [0, 0]), 'application/x-hdf5'],
  [
    'HDF5 after a user block',
    withPrefix(512, bytes([0x89], 'HDF\r\n\x1a\n')),
    'application/x-hdf5',
  ],
  ['NetCDF classic', bytes('CDF\x01', [0, 0, 0, 0]), 'application/x-netcdf'],
  ['NetCDF 64-bit offset', bytes('CDF\x02', [0, 0, 0, 0]), 'application/x-netcdf'],
  ['FITS', bytes('SIMPLE  =                    T / conforms to FITS standard'), 'application/fits'],
  ['DICOM', withPrefix(128, bytes('DICM', [2, 0, 0, 0])), 'application/dicom'],
  ['XML', utf8('<?xml version="1.0"?>\n<a/>'), 'application/xml'],
  ['XML after a BOM', bytes([0xef, 0xbb, 0xbf], '<?xml version="1.0"?>'), 'application/xml'],
  ['JSON object', utf8('{"a": 1}'), 'application/json'],
  [
    'JSON array after BOM and whitespace',
    bytes([0xef, 0xbb, 0xbf], ' \r\n\t[1, 2]'),
    'application/json',
  ],
  ['JSON cut mid-character', utf8('{"name": "Zürich €"').slice(0, -2), 'application/json'],
  ['plain text', utf8('sample,temperature\nA,21.5\n'), 'text/plain'],
  ['text with accents and emoji', utf8('Grüße 😀 ✓'), 'text/plain'],
  ['text cut inside a 4-byte character', utf8('ok 😀').slice(0, -1), 'text/plain'],
  ['text cut after a 3-byte lead byte', utf8('ok €').slice(0, -2), 'text/plain'],
  ['text starting with BM', utf8('BMW service report'), 'text/plain'],
  ['text that starts like bzip2 but is not', utf8('BZh? no'), 'text/plain'],
  ['text with a NUL', bytes('abc\0def'), 'application/octet-stream'],
  ['JSON-looking with a NUL', bytes('{"a":\0}'), 'application/octet-stream'],
  // Not UTF-8, and not text in a one-byte code page either (a control byte in each).
  ['invalid UTF-8 continuation', bytes('abc', [0xc3, 0x28, 0x01]), 'application/octet-stream'],
  ['overlong encoding', bytes([0xc0, 0xaf, 0x02]), 'application/octet-stream'],
  ['UTF-16 surrogate in UTF-8', bytes([0xed, 0xa0, 0x80, 0x41, 0x03]), 'application/octet-stream'],
  ['past U+10FFFF', bytes([0xf4, 0x90, 0x80, 0x80, 0x04]), 'application/octet-stream'],
  ['lone continuation byte', bytes('a', [0x80], 'b', [0x05]), 'application/octet-stream'],
  [
    'truncated sequence before more text',
    bytes([0xe2, 0x82], 'abc', [0x06]),
    'application/octet-stream',
  ],
  ['random binary', bytes([0x00, 0x01, 0x02, 0xfe, 0xff]), 'application/octet-stream'],
  ['binary without NUL', bytes([0x89, 0x12, 0xfe, 0x7f, 0x33]), 'application/octet-stream'],
  // Mutation: text that is not UTF-8 taken for binary, as it was: Windows instruments' exports.
  ['Latin-1 CSV', bytes('Temp [', [0xb0], 'C];Size [', [0xb5], 'm]\r\n21.5;3\r\n'), 'text/plain'],
  ['Windows-1252 quotes', bytes([0x93], 'sample', [0x94], ' ', [0x96], ' ok'), 'text/plain'],
  ['UTF-16LE with BOM', bytes([0xff, 0xfe], 'a\0,\0b\0\r\0\n\0'), 'text/plain'],
  ['UTF-16BE with BOM', bytes([0xfe, 0xff], '\0a\0,\0b'), 'text/plain'],
  ['UTF-16LE without BOM', bytes('T\0i\0m\0e\0,\0V\0\r\0\n\0'), 'text/plain'],
  // Mutation: any text that starts with a bracket taken for JSON, as it was.
  ['Illumina sample sheet', utf8('[Header]\nIEMFileVersion,4\n'), 'text/plain'],
  ['INI file', utf8('; exported\n[Instrument]\nname=SEM\n'), 'text/plain'],
  ['INI file, bracket first', utf8('[Instrument]\r\nname=SEM\r\n'), 'text/plain'],
  ['bracketed list of words', utf8('[a, b, c]'), 'text/plain'],
  ['brace then prose', utf8('{ see notes }'), 'text/plain'],
  ['JSON cut inside a string', utf8('{"sample": "Fe3O4 on Si'), 'application/json'],
  ['JSON cut inside a literal', utf8('[1, 2, tr'), 'application/json'],
  ['JSON cut after a key', utf8('{"a": {"b": [1.5e3, null, false], "c":'), 'application/json'],
  ['JSON with escapes', utf8('{"a\\"b": "\\u00e9"}'), 'application/json'],
  ['JSON cut inside a number', utf8('{"v": [1.'), 'application/json'],
  // Mutation: one value only, no NaN, and a stop at depth 64, as the sniffer first was.
  ['JSON Lines', utf8('{"a": 1}\n{"a": 2}\n{"a"'), 'application/json'],
  ['JSON with NaN and Infinity', utf8('{"v": [NaN, Infinity, -Infinity, 1]}'), 'application/json'],
  ['JSON cut inside Infinity', utf8('[1, -Infin'), 'application/json'],
  [
    'JSON nested deeper than followed',
    utf8('['.repeat(100) + '1' + ']'.repeat(100)),
    'application/json',
  ],
  ['JSON then more', utf8('{"a": 1} trailing'), 'text/plain'],
  ['DICOM head too short', withPrefix(128, bytes('DIC')).slice(0, 131), 'application/octet-stream'],
];

describe('sniffMime', () => {
  it.each(table)('%s -> %s', (_name, head, mime) => {
    expect(sniffMime(head)).toBe(mime);
  });

  it('looks only at the head it is given', () => {
    const large = new Uint8Array(4096).fill(0x61);
    expect(sniffMime(large)).toBe('text/plain');
    large.set(utf8('["'), 0);
    expect(sniffMime(large)).toBe('application/json');
  });

  it('takes every JSON object or array for JSON, cut anywhere, and never throws', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.array(fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue())),
        fc.nat(),
        (value, cut) => {
          const whole = utf8(JSON.stringify(value, null, cut % 3));
          const head = whole.subarray(0, 1 + (cut % whole.length));
          expect(sniffMime(head)).toBe('application/json');
        },
      ),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (head) => {
        expect(typeof sniffMime(head)).toBe('string');
      }),
    );
    // Larger than any caller passes (4 KiB): no call with too many arguments.
    const big = new Uint8Array(200_000).fill(0x20);
    big[0] = 0x5b;
    expect(sniffMime(big)).toBe('application/json');
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 4000, maxLength: 5000 }), (head) => {
        expect(typeof sniffMime(head)).toBe('string');
      }),
    );
  });
});
