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
  ['invalid UTF-8 continuation', bytes('abc', [0xc3, 0x28]), 'application/octet-stream'],
  ['overlong encoding', bytes([0xc0, 0xaf]), 'application/octet-stream'],
  ['UTF-16 surrogate in UTF-8', bytes([0xed, 0xa0, 0x80, 0x41]), 'application/octet-stream'],
  ['past U+10FFFF', bytes([0xf4, 0x90, 0x80, 0x80]), 'application/octet-stream'],
  ['lone continuation byte', bytes('a', [0x80], 'b'), 'application/octet-stream'],
  ['truncated sequence before more text', bytes([0xe2, 0x82], 'abc'), 'application/octet-stream'],
  ['random binary', bytes([0x00, 0x01, 0x02, 0xfe, 0xff]), 'application/octet-stream'],
  ['DICOM head too short', withPrefix(128, bytes('DIC')).slice(0, 131), 'application/octet-stream'],
];

describe('sniffMime', () => {
  it.each(table)('%s -> %s', (_name, head, mime) => {
    expect(sniffMime(head)).toBe(mime);
  });

  it('looks only at the head it is given', () => {
    const large = new Uint8Array(4096).fill(0x61);
    expect(sniffMime(large)).toBe('text/plain');
    large.set(utf8('{'), 0);
    expect(sniffMime(large)).toBe('application/json');
  });
});
