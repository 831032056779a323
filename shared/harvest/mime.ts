// MIME type from the first bytes of a file (callers pass up to 4096; DICOM needs 132).

type Signature = { offset: number; bytes: readonly number[]; mime: string };

function ascii(text: string): number[] {
  return Array.from(text, (char) => char.charCodeAt(0));
}

const HDF5 = [0x89, ...ascii('HDF\r\n\x1a\n')];

const SIGNATURES: readonly Signature[] = [
  { offset: 0, bytes: [0x89, ...ascii('PNG\r\n\x1a\n')], mime: 'image/png' },
  { offset: 0, bytes: [0xff, 0xd8, 0xff], mime: 'image/jpeg' },
  { offset: 0, bytes: ascii('GIF87a'), mime: 'image/gif' },
  { offset: 0, bytes: ascii('GIF89a'), mime: 'image/gif' },
  { offset: 0, bytes: ascii('II*\0'), mime: 'image/tiff' },
  { offset: 0, bytes: ascii('MM\0*'), mime: 'image/tiff' },
  { offset: 0, bytes: ascii('II+\0'), mime: 'image/tiff' },
  { offset: 0, bytes: ascii('MM\0+'), mime: 'image/tiff' },
  { offset: 0, bytes: ascii('%PDF-'), mime: 'application/pdf' },
  { offset: 0, bytes: ascii('PK\x03\x04'), mime: 'application/zip' },
  // An empty archive is just the end-of-central-directory record.
  { offset: 0, bytes: ascii('PK\x05\x06'), mime: 'application/zip' },
  { offset: 0, bytes: ascii('PK\x07\x08'), mime: 'application/zip' },
  { offset: 0, bytes: [0x1f, 0x8b, 0x08], mime: 'application/gzip' },
  { offset: 0, bytes: [0xfd, ...ascii('7zXZ\0')], mime: 'application/x-xz' },
  { offset: 0, bytes: [0x28, 0xb5, 0x2f, 0xfd], mime: 'application/zstd' },
  { offset: 0, bytes: [0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], mime: 'application/x-7z-compressed' },
  { offset: 0, bytes: HDF5, mime: 'application/x-hdf5' },
  // HDF5 allows a user block before the superblock, so it may also start at 512, 1024, 2048.
  { offset: 512, bytes: HDF5, mime: 'application/x-hdf5' },
  { offset: 1024, bytes: HDF5, mime: 'application/x-hdf5' },
  { offset: 2048, bytes: HDF5, mime: 'application/x-hdf5' },
  { offset: 0, bytes: ascii('CDF\x01'), mime: 'application/x-netcdf' },
  { offset: 0, bytes: ascii('CDF\x02'), mime: 'application/x-netcdf' },
  { offset: 0, bytes: ascii('CDF\x05'), mime: 'application/x-netcdf' },
  { offset: 0, bytes: ascii('SIMPLE  ='), mime: 'application/fits' },
  { offset: 128, bytes: ascii('DICM'), mime: 'application/dicom' },
];

function startsWith(head: Uint8Array, offset: number, bytes: readonly number[]): boolean {
  if (head.length < offset + bytes.length) return false;
  return bytes.every((byte, i) => head[offset + i] === byte);
}

/** "BM" alone is too common at the start of text, so also require a known DIB header size. */
function isBmp(head: Uint8Array): boolean {
  if (head.length < 18 || head[0] !== 0x42 || head[1] !== 0x4d) return false;
  const dibSize = head[14] | (head[15] << 8) | (head[16] << 16) | (head[17] << 24);
  return [12, 16, 40, 52, 56, 64, 108, 124].includes(dibSize);
}

function isBzip2(head: Uint8Array): boolean {
  return startsWith(head, 0, ascii('BZh')) && head.length > 3 && head[3] >= 0x31 && head[3] <= 0x39;
}

function inRange(byte: number | undefined, low: number, high: number): boolean {
  return byte !== undefined && byte >= low && byte <= high;
}

/**
 * Well-formed UTF-8 without NUL (Unicode table 3-7: no overlongs, no surrogates, nothing past
 * U+10FFFF). A sequence cut off by the end of the head still counts, since the head is usually
 * a prefix of a longer file.
 */
function isUtf8Text(head: Uint8Array): boolean {
  let i = 0;
  while (i < head.length) {
    const lead = head[i];
    if (lead === 0) return false;
    if (lead < 0x80) {
      i++;
      continue;
    }
    let length: number;
    let low = 0x80;
    let high = 0xbf;
    if (inRange(lead, 0xc2, 0xdf)) {
      length = 2;
    } else if (inRange(lead, 0xe0, 0xef)) {
      length = 3;
      if (lead === 0xe0) low = 0xa0;
      if (lead === 0xed) high = 0x9f;
    } else if (inRange(lead, 0xf0, 0xf4)) {
      length = 4;
      if (lead === 0xf0) low = 0x90;
      if (lead === 0xf4) high = 0x8f;
    } else {
      return false;
    }
    for (let k = 1; k < length; k++) {
      if (i + k >= head.length) return true;
      const byte = head[i + k];
      if (k === 1 ? !inRange(byte, low, high) : !inRange(byte, 0x80, 0xbf)) return false;
    }
    i += length;
  }
  return true;
}

function skipBomAndWhitespace(head: Uint8Array): number {
  let i = startsWith(head, 0, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  while (i < head.length && [0x20, 0x09, 0x0a, 0x0d].includes(head[i])) i++;
  return i;
}

export function sniffMime(head: Uint8Array): string {
  if (head.length === 0) return 'application/x-empty';
  for (const signature of SIGNATURES) {
    if (startsWith(head, signature.offset, signature.bytes)) return signature.mime;
  }
  if (isBzip2(head)) return 'application/x-bzip2';
  if (isBmp(head)) return 'image/bmp';
  const bom = startsWith(head, 0, [0xef, 0xbb, 0xbf]) ? 3 : 0;
  if (startsWith(head, bom, ascii('<?xml'))) return 'application/xml';
  if (!isUtf8Text(head)) return 'application/octet-stream';
  const first = head[skipBomAndWhitespace(head)];
  if (first === 0x7b || first === 0x5b) return 'application/json';
  return 'text/plain';
}
