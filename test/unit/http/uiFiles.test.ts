import { describe, expect, it } from 'vitest';
import { isPlainName, uiFileFilter } from '../../../electron/core/http/uiFiles.js';

describe('the names the listeners and the app scheme serve the build under', () => {
  it('isPlainName: refuses what a file system may take for another name', () => {
    for (const name of ['index.html', 'bench.html', 'a.b c.js', 'index-abc.js.map', '.hidden']) {
      expect(isPlainName(name), name).toBe(true);
    }
    for (const name of [
      '',
      '.',
      '..',
      'bench.html.',
      'bench.html ',
      'bench.html. . ',
      'assets.',
      'a/b',
      'a\\b',
      'C:',
      'bench.html::$DATA',
      'bench.html\0.png',
    ]) {
      expect(isPlainName(name), JSON.stringify(name)).toBe(false);
    }
  });

  it('uiFileFilter: refuses the bench page in any case, and any path with a name that is not plain', () => {
    const allowed = uiFileFilter({ sourceMaps: true });
    for (const path of ['/', '/index.html', '/assets/', '/assets/index-abc.js', '/benches.html']) {
      expect(allowed(path), path).toBe(true);
    }
    for (const path of [
      '/bench.html',
      '/Bench.html',
      '/BENCH.HTML',
      '/bench.html.',
      '/bench.html ',
      '/bench.html::$DATA',
      '/assets/Bench-abc.js',
      '/assets./bench-abc.js',
      '/assets\\bench-abc.js',
      '/index.html.',
      '/assets /index-abc.js',
      '/assets//index-abc.js',
    ]) {
      expect(allowed(path), JSON.stringify(path)).toBe(false);
    }
    // The server hands out no source maps, whatever the spelling.
    expect(uiFileFilter({ sourceMaps: false })('/assets/index-abc.js.map')).toBe(false);
  });
});
