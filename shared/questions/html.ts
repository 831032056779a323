// Allow-list sanitizer for title_html, by plain string processing (no DOM).
//
// The output is built only from (1) text with <, >, " and ' escaped and & kept only when it
// starts a well-formed character reference, and (2) tags this module writes itself: the
// allowed elements without attributes, and <a> with a checked http/https/mailto href plus
// rel="noopener noreferrer" target="_blank". Whatever the input, the output therefore holds
// no other element, attribute or URL scheme. Unknown tags are dropped (their text is kept);
// the content of script-like elements and comments is dropped; open tags are closed at the end.

const ALLOWED = new Set([
  'b',
  'i',
  'em',
  'strong',
  'u',
  's',
  'sub',
  'sup',
  'br',
  'p',
  'span',
  'small',
  'code',
  'ul',
  'ol',
  'li',
  'a',
]);

const VOID = new Set(['br']);

/** Elements whose whole content is dropped with them. */
const DROP_CONTENT = new Set([
  'script',
  'style',
  'textarea',
  'title',
  'xmp',
  'iframe',
  'noembed',
  'noframes',
  'noscript',
  'plaintext',
  'template',
  'object',
  'svg',
  'math',
]);

const LINK_ATTRIBUTES = 'rel="noopener noreferrer" target="_blank"';

interface Tag {
  name: string;
  closing: boolean;
  attributes: Map<string, string>;
  /** Index just after the closing '>'. */
  end: number;
}

function isAsciiLetter(ch: string): boolean {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z');
}

function isSpace(ch: string): boolean {
  return ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '\f';
}

/** Reads a tag starting at `start` (a '<'); null when it is not a complete tag. */
function readTag(html: string, start: number): Tag | null {
  let i = start + 1;
  const closing = html.charAt(i) === '/';
  if (closing) i++;
  if (!isAsciiLetter(html.charAt(i))) return null;
  const nameStart = i;
  while (
    i < html.length &&
    !isSpace(html.charAt(i)) &&
    html.charAt(i) !== '/' &&
    html.charAt(i) !== '>'
  )
    i++;
  const name = html.slice(nameStart, i).toLowerCase();
  const attributes = new Map<string, string>();
  for (;;) {
    while (i < html.length && (isSpace(html.charAt(i)) || html.charAt(i) === '/')) i++;
    if (i >= html.length) return null;
    if (html.charAt(i) === '>') return { name, closing, attributes, end: i + 1 };
    const attrStart = i;
    i++; // the first character belongs to the name even when it is '='
    while (i < html.length && !isSpace(html.charAt(i)) && !'/>='.includes(html.charAt(i))) i++;
    const attrName = html.slice(attrStart, i).toLowerCase();
    while (i < html.length && isSpace(html.charAt(i))) i++;
    let value = '';
    if (html.charAt(i) === '=') {
      i++;
      while (i < html.length && isSpace(html.charAt(i))) i++;
      const quoteChar = html.charAt(i);
      if (quoteChar === '"' || quoteChar === "'") {
        const close = html.indexOf(quoteChar, i + 1);
        if (close < 0) return null;
        value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const valueStart = i;
        while (i < html.length && !isSpace(html.charAt(i)) && html.charAt(i) !== '>') i++;
        value = html.slice(valueStart, i);
      }
    }
    if (!attributes.has(attrName)) attributes.set(attrName, value);
  }
}

const NAMED_IN_URL: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  colon: ':',
  sol: '/',
  tab: '\t',
  newline: '\n',
  period: '.',
  num: '#',
  quest: '?',
  equals: '=',
  percnt: '%',
  commat: '@',
};

/** Decodes the character references an attribute value may use (enough to see its scheme). */
function decodeAttribute(value: string): string {
  return value.replace(/&(#[xX][0-9a-fA-F]+|#[0-9]+|[a-zA-Z]+);?/g, (whole, body: string) => {
    if (body.charAt(0) === '#') {
      const hex = body.charAt(1) === 'x' || body.charAt(1) === 'X';
      const code = parseInt(hex ? body.slice(2) : body.slice(1), hex ? 16 : 10);
      if (
        !Number.isFinite(code) ||
        code <= 0 ||
        code > 0x10ffff ||
        (code >= 0xd800 && code <= 0xdfff)
      )
        return '\uFFFD';
      return String.fromCodePoint(code);
    }
    return NAMED_IN_URL[body.toLowerCase()] ?? whole;
  });
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/** The href to write, escaped for a double-quoted attribute, or null when it is not allowed. */
function safeHref(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  const url = decodeAttribute(raw).trim();
  if (hasControlCharacter(url)) return null;
  const lower = url.toLowerCase();
  const isWeb = lower.startsWith('http://') || lower.startsWith('https://');
  const isMail = lower.startsWith('mailto:');
  const rest = isWeb ? url.slice(url.indexOf('//') + 2) : isMail ? url.slice('mailto:'.length) : '';
  if (rest === '') return null;
  return url
    .replace(/&/g, '&amp;')
    .replace(/"/g, '&quot;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

const CHARACTER_REFERENCE = /^&(?:[a-zA-Z][a-zA-Z0-9]{0,31}|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});/;

function escapeText(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text.charAt(i);
    if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else if (ch === '"') out += '&quot;';
    else if (ch === "'") out += '&#39;';
    else if (ch === '&') {
      const match = CHARACTER_REFERENCE.exec(text.slice(i, i + 40));
      out += match ? '&' : '&amp;';
    } else if (ch === '\u0000') out += '\uFFFD';
    else out += ch;
  }
  return out;
}

/** Skips a dropped element's content: returns the index after its end tag, or the end of input. */
function skipContent(html: string, name: string, from: number): number {
  const lower = html.toLowerCase();
  let i = from;
  for (;;) {
    const found = lower.indexOf(`</${name}`, i);
    if (found < 0) return html.length;
    const after = lower.charAt(found + 2 + name.length);
    if (after === '' || after === '>' || after === '/' || isSpace(after)) {
      const close = html.indexOf('>', found);
      return close < 0 ? html.length : close + 1;
    }
    i = found + 2;
  }
}

/** Skips markup that is not a tag (<!-- -->, <!...>, <?...>, </ ...>); null when it is plain text. */
function skipOtherMarkup(html: string, start: number): number | null {
  if (html.startsWith('<!--', start)) {
    const close = html.indexOf('-->', start + 4);
    return close < 0 ? html.length : close + 3;
  }
  const next = html.charAt(start + 1);
  if (next === '!' || next === '?' || (next === '/' && !isAsciiLetter(html.charAt(start + 2)))) {
    const close = html.indexOf('>', start + 1);
    return close < 0 ? null : close + 1;
  }
  return null;
}

function sanitize(html: string): string {
  let out = '';
  let text = '';
  const open: string[] = [];
  let i = 0;
  const flushText = (): void => {
    out += escapeText(text);
    text = '';
  };
  while (i < html.length) {
    const lt = html.indexOf('<', i);
    if (lt < 0) {
      text += html.slice(i);
      break;
    }
    text += html.slice(i, lt);
    const skipped = skipOtherMarkup(html, lt);
    if (skipped !== null) {
      i = skipped;
      continue;
    }
    const tag = readTag(html, lt);
    if (tag === null) {
      text += '<';
      i = lt + 1;
      continue;
    }
    i = tag.end;
    if (!tag.closing && DROP_CONTENT.has(tag.name)) {
      i = skipContent(html, tag.name, i);
      continue;
    }
    if (!ALLOWED.has(tag.name)) continue;
    flushText();
    if (tag.closing) {
      const at = open.lastIndexOf(tag.name);
      if (at < 0) continue;
      while (open.length > at) out += `</${open.pop() ?? ''}>`;
      continue;
    }
    if (VOID.has(tag.name)) {
      out += `<${tag.name}>`;
      continue;
    }
    if (tag.name === 'a') {
      const href = safeHref(tag.attributes.get('href'));
      if (href === null) continue;
      out += `<a href="${href}" ${LINK_ATTRIBUTES}>`;
    } else {
      out += `<${tag.name}>`;
    }
    open.push(tag.name);
  }
  flushText();
  while (open.length > 0) out += `</${open.pop() ?? ''}>`;
  return out;
}

/** Safe HTML for a question's title_html: see the rules at the top of this file. Never throws. */
export function sanitizeTitleHtml(html: string): string {
  try {
    return typeof html === 'string' ? sanitize(html) : '';
  } catch {
    return '';
  }
}
