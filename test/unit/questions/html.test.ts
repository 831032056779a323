import { describe, expect, it } from 'vitest';
import { questionLabel, sanitizeTitleHtml } from '../../../shared/questions/index.js';

const LINK = 'rel="noopener noreferrer" target="_blank"';

describe('sanitizeTitleHtml', () => {
  it('keeps the allowed elements, without attributes', () => {
    const allowed = [
      'b',
      'i',
      'em',
      'strong',
      'u',
      's',
      'sub',
      'sup',
      'p',
      'span',
      'small',
      'code',
      'ul',
      'ol',
      'li',
    ];
    for (const tag of allowed) {
      expect(sanitizeTitleHtml(`<${tag} class="x" style="color:red">t</${tag}>`)).toBe(
        `<${tag}>t</${tag}>`,
      );
    }
    expect(sanitizeTitleHtml('a<br>b<BR/>c')).toBe('a<br>b<br>c');
    expect(sanitizeTitleHtml('<B>bold</B>')).toBe('<b>bold</b>');
  });

  it('keeps http, https and mailto links, with rel and target added', () => {
    expect(
      sanitizeTitleHtml('<a href="https://example.org/x?a=1&amp;b=2" onclick="evil()">x</a>'),
    ).toBe(`<a href="https://example.org/x?a=1&amp;b=2" ${LINK}>x</a>`);
    expect(sanitizeTitleHtml("<a href='http://e.org' target='_self' rel=opener>y</a>")).toBe(
      `<a href="http://e.org" ${LINK}>y</a>`,
    );
    expect(sanitizeTitleHtml('<a href=mailto:staff@lab.org>mail</a>')).toBe(
      `<a href="mailto:staff@lab.org" ${LINK}>mail</a>`,
    );
  });

  it('drops links with other schemes, however they are disguised, keeping the text', () => {
    const hrefs = [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      ' javascript:alert(1)',
      'java&#x09;script:alert(1)',
      'javascript&colon;alert(1)',
      '&#106;avascript:alert(1)',
      'data:text/html,<script>alert(1)</script>',
      'vbscript:x',
      '/relative',
      '//evil.org',
      'http:',
      'https://',
      'http://a\u0000b',
    ];
    for (const href of hrefs) {
      expect(sanitizeTitleHtml(`<a href="${href}">t</a>`), href).toBe('t');
    }
    expect(sanitizeTitleHtml('<a>t</a>')).toBe('t');
  });

  it('decodes character references before checking the scheme', () => {
    expect(sanitizeTitleHtml('<a href="http&#58;//e.org">t</a>')).toBe(
      `<a href="http://e.org" ${LINK}>t</a>`,
    );
  });

  it('escapes a quote in the href so it cannot end the attribute', () => {
    expect(sanitizeTitleHtml('<a href=\'https://e.org/"onmouseover="x\'>t</a>')).toBe(
      `<a href="https://e.org/&quot;onmouseover=&quot;x" ${LINK}>t</a>`,
    );
  });

  it('drops script-like elements with their content, and comments', () => {
    expect(sanitizeTitleHtml('a<script>alert(1)</script>b')).toBe('ab');
    expect(sanitizeTitleHtml('a<SCRIPT src=x>alert(1)</script >b')).toBe('ab');
    expect(sanitizeTitleHtml('a<style>*{}</style>b')).toBe('ab');
    expect(sanitizeTitleHtml('a<!-- <b>hidden</b> -->b')).toBe('ab');
    expect(sanitizeTitleHtml('a<script>never closed')).toBe('a');
    expect(sanitizeTitleHtml('<svg><script>alert(1)</script></svg>ok')).toBe('ok');
  });

  it('drops unknown elements but keeps their text', () => {
    expect(sanitizeTitleHtml('<div>x</div><img src=x onerror=alert(1)>')).toBe('x');
    expect(sanitizeTitleHtml('<font color=red>red</font>')).toBe('red');
  });

  it('escapes text, keeping valid character references', () => {
    expect(sanitizeTitleHtml('1 < 2 > 0 & "q" \'s\'')).toBe(
      '1 &lt; 2 &gt; 0 &amp; &quot;q&quot; &#39;s&#39;',
    );
    expect(sanitizeTitleHtml('&lt;b&gt; &amp; &#8364; &eacute; &x')).toBe(
      '&lt;b&gt; &amp; &#8364; &eacute; &amp;x',
    );
    expect(sanitizeTitleHtml('<3 and < b>')).toBe('&lt;3 and &lt; b&gt;');
  });

  it('balances tags: closes what is open, drops stray closing tags', () => {
    expect(sanitizeTitleHtml('<b><i>x</b> y</i></u>')).toBe('<b><i>x</i></b> y');
    expect(sanitizeTitleHtml('<ul><li>one<li>two')).toBe('<ul><li>one<li>two</li></li></ul>');
  });

  it('treats an unfinished tag as text', () => {
    expect(sanitizeTitleHtml('a <b class="x')).toBe('a &lt;b class=&quot;x');
  });

  it('is idempotent', () => {
    const inputs = [
      '<a href="https://e.org?a=1&b=2">x</a>',
      '<b>x',
      "it's <i>fine</i> & done",
      '<p>&amp;</p>',
    ];
    for (const input of inputs) {
      const once = sanitizeTitleHtml(input);
      expect(sanitizeTitleHtml(once)).toBe(once);
    }
  });

  it('never throws on non-strings', () => {
    expect(sanitizeTitleHtml(undefined as unknown as string)).toBe('');
    expect(sanitizeTitleHtml({} as unknown as string)).toBe('');
  });
});

describe('questionLabel', () => {
  it('uses the title, else the text of title_html, else the name', () => {
    expect(questionLabel({ type: 'textbox', name: 'n', title: ' Title ' })).toBe('Title');
    expect(
      questionLabel({
        type: 'textbox',
        name: 'n',
        title: '',
        title_html: '<b>Bold</b> &amp; more',
      }),
    ).toBe('Bold & more');
    expect(questionLabel({ type: 'textbox', name: 'n', title_html: '<br>' })).toBe('n');
    expect(questionLabel({ type: 'textbox', name: 'n' })).toBe('n');
  });
});
