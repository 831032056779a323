/**
 * A file's metadata as the Data tab and the server's Files page show it: names and values
 * nested as stored, each name's dotted path as its tooltip, the JSON a click away.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { MetadataTree } from '../../../renderer/src/components/MetadataTree.js';

const html = (metadata: Record<string, unknown>): string =>
  renderToStaticMarkup(createElement(MetadataTree, { metadata }));

describe('MetadataTree', () => {
  it('lists each part, nested, with the dotted path a search takes as tooltip', () => {
    const out = html({
      file_info: { mime_type: 'image/tiff', size: 1024, created_at: null },
      usage_context: {
        user: { username: 'ada' },
        consent: true,
        samples: [{ name: 'grid 3' }, 'loose'],
        tags: [],
        note: '',
      },
      hook_errors: [{ hook: 'describe', error: 'timed out' }],
    });
    expect(out).toContain('<h4 class="metadata-part" title="file_info">file_info</h4>');
    expect(out).toContain('<dt title="file_info.mime_type">mime_type</dt><dd>image/tiff</dd>');
    expect(out).toContain('<dt title="file_info.size">size</dt><dd>1024</dd>');
    expect(out).toContain(
      '<dt title="file_info.created_at">created_at</dt><dd><span class="muted">none</span></dd>',
    );
    expect(out).toContain('<dt title="usage_context.user.username">username</dt><dd>ada</dd>');
    expect(out).toContain('<dt title="usage_context.consent">consent</dt><dd>yes</dd>');
    // A list's items are numbered; names inside them take no path (the search takes no index).
    expect(out).toContain(
      '<ol class="metadata-items"><li><dl class="metadata-tree"><dt>name</dt><dd>grid 3</dd></dl></li><li>loose</li></ol>',
    );
    expect(out).toContain(
      '<dt title="usage_context.tags">tags</dt><dd><span class="muted">none</span></dd>',
    );
    expect(out).toContain(
      '<dt title="usage_context.note">note</dt><dd><span class="muted">empty</span></dd>',
    );
    // A part that is not a group of fields is a name and its value, as any other, under a
    // heading of their own after the parts (not read as the last part's).
    expect(out).toContain(
      '<h4 class="metadata-part">Other fields</h4><dl class="metadata-tree"><dt title="hook_errors">hook_errors</dt><dd><ol class="metadata-items"><li><dl class="metadata-tree"><dt>hook</dt><dd>describe</dd>',
    );
    // The JSON, for copying, is there as stored.
    expect(out).toContain('<summary>As JSON</summary>');
    expect(out).toContain('&quot;mime_type&quot;: &quot;image/tiff&quot;');
  });

  it("shows a sidecar's own fields under a heading of their own, not as the part before them", () => {
    const out = html({
      file_info: { size: 1 },
      detector: 'SE',
      mag: 5000,
      usage_context: { tool: 'SEM' },
    });
    expect(out.indexOf('title="usage_context"')).toBeLessThan(out.indexOf('Other fields'));
    expect(out).toContain(
      '<h4 class="metadata-part">Other fields</h4><dl class="metadata-tree"><dt title="detector">detector</dt><dd>SE</dd><dt title="mag">mag</dt><dd>5000</dd></dl>',
    );
    // Without any part, no heading is needed.
    expect(html({ detector: 'SE' })).not.toContain('Other fields');
  });

  it('escapes what it shows: a value is text, never markup', () => {
    const out = html({ sidecar: { '<b>name</b>': '<img src=x onerror=alert(1)>' } });
    expect(out).not.toContain('<img');
    expect(out).not.toContain('<b>');
    expect(out).toContain('&lt;img src=x onerror=alert(1)&gt;');
  });

  it('says when no hook has added metadata', () => {
    expect(html({})).toContain('No metadata: no post-transfer hook has added any to this file.');
  });
});
