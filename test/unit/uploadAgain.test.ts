import { describe, expect, it } from 'vitest';
import { relativeToBase } from '../../electron/core/harvest/uploadAgain.js';

describe('relativeToBase (a transfer sent again names its destination in its location)', () => {
  it('takes the part under the base, with or without a trailing separator', () => {
    expect(relativeToBase('/srv/store/SEM/a.tif', '/srv/store')).toBe('SEM/a.tif');
    expect(relativeToBase('/srv/store/SEM/a.tif', '/srv/store/')).toBe('SEM/a.tif');
  });

  it('names a Windows server path with /', () => {
    expect(relativeToBase('D:\\store\\SEM\\a.tif', 'D:\\store')).toBe('SEM/a.tif');
  });

  it('refuses a path outside the base, a sibling sharing its prefix, and the base itself', () => {
    expect(relativeToBase('/srv/other/a.tif', '/srv/store')).toBeNull();
    expect(relativeToBase('/srv/store2/a.tif', '/srv/store')).toBeNull();
    expect(relativeToBase('/srv/store', '/srv/store')).toBeNull();
    expect(relativeToBase('/srv/store/', '/srv/store')).toBeNull();
    expect(relativeToBase('/a.tif', '/')).toBeNull();
  });
});
