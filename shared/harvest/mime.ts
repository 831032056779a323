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

/**
 * Whether `text` (a head, perhaps cut anywhere) starts a JSON value: `[Header]` (an Illumina
 * sample sheet) and `[Instrument]` (an INI file) start with a bracket and are not JSON.
 */
const LITERALS = ['true', 'false', 'null', 'NaN', 'Infinity', '-Infinity'];
const LITERAL = /^(?:-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null|NaN|-?Infinity)/;

function startsJson(text: string): boolean {
  let i = 0;
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  // Each returns false for text that is not JSON; running out of text is a head cut short.
  const value = (depth: number): boolean => {
    space();
    if (i >= text.length) return true;
    const c = text[i];
    if (c === '{' || c === '[') {
      // Deeper than this is not followed: a head that far in is taken for JSON.
      if (depth > 64) return ((i = text.length), true);
      const close = c === '{' ? '}' : ']';
      i++;
      space();
      if (text[i] === close) return (i++, true);
      for (;;) {
        if (c === '{') {
          space();
          if (i >= text.length) return true;
          if (text[i] !== '"' || !string()) return false;
          space();
          if (i >= text.length) return true;
          if (text[i++] !== ':') return false;
        }
        if (!value(depth + 1)) return false;
        space();
        if (i >= text.length) return true;
        if (text[i] === close) return (i++, true);
        if (text[i++] !== ',') return false;
      }
    }
    if (c === '"') return string();
    // A literal the head cuts short ("tr", "1.", "2e-", "Infin") is a JSON head too. NaN and
    // Infinity are not JSON, but Python's json.dump writes them, as much lab data holds.
    if (text.length - i <= 400) {
      const rest = text.slice(i);
      if (
        LITERALS.some((word) => word.startsWith(rest)) ||
        /^(?:-|-?(?:0|[1-9]\d*)(?:\.\d*)?(?:[eE][+-]?\d*)?)$/.test(rest)
      ) {
        i = text.length;
        return true;
      }
    }
    const literal = LITERAL.exec(text.slice(i, i + 400));
    if (!literal) return false;
    i += literal[0].length;
    return true;
  };
  const string = (): boolean => {
    for (i++; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return (i++, true);
      else if (text.charCodeAt(i) < 0x20) return false;
    }
    return true;
  };
  // One value, or one per line (JSON Lines): each a whole object or array.
  for (;;) {
    if (!value(0)) return false;
    space();
    if (i >= text.length) return true;
    if (text[i] !== '{' && text[i] !== '[') return false;
  }
}

/**
 * Text in a one-byte code page (ISO-8859-1, Windows-1252): what Windows instrument software
 * often writes, "°C" and "µm" in CSV exports. No NUL, no C0 control but tab, line breaks, form
 * feed and escape, no DEL.
 */
function isSingleByteText(head: Uint8Array): boolean {
  return head.every(
    (b) =>
      (b >= 0x20 && b !== 0x7f) ||
      b === 0x09 ||
      b === 0x0a ||
      b === 0x0c ||
      b === 0x0d ||
      b === 0x1b,
  );
}

/** UTF-16 text: a byte-order mark, or ASCII characters each beside a zero byte. */
function isUtf16Text(head: Uint8Array): boolean {
  if (startsWith(head, 0, [0xff, 0xfe]) || startsWith(head, 0, [0xfe, 0xff])) return true;
  if (head.length < 8) return false;
  const zeroAt = head[0] === 0 ? 0 : head[1] === 0 ? 1 : -1;
  if (zeroAt < 0) return false;
  for (let i = 0; i + 1 < head.length; i += 2) {
    const char = head[i + 1 - zeroAt];
    if (head[i + zeroAt] !== 0 || !isSingleByteText(head.subarray(i + 1 - zeroAt, i + 2 - zeroAt)))
      return false;
    if (char >= 0x80) return false;
  }
  return true;
}

/** One character per byte; in pieces, as a call takes only so many arguments. */
function byteText(bytes: Uint8Array): string {
  let text = '';
  for (let at = 0; at < bytes.length; at += 4096) {
    text += String.fromCharCode(...bytes.subarray(at, at + 4096));
  }
  return text;
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
  if (!isUtf8Text(head)) {
    return isUtf16Text(head) || isSingleByteText(head) ? 'text/plain' : 'application/octet-stream';
  }
  const first = head[skipBomAndWhitespace(head)];
  if (first === 0x7b || first === 0x5b) {
    // Byte by byte: the structure JSON needs is ASCII, and UTF-8's other bytes are 0x80 and up.
    if (startsJson(byteText(head.subarray(bom)))) return 'application/json';
  }
  return 'text/plain';
}
