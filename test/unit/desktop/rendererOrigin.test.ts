import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const RENDERER = join(import.meta.dirname, '../../../renderer/src');

describe("the renderer's sources", () => {
  // The page runs at app://labstation (desktop) or an http origin (station, server), never
  // file://; a comment saying otherwise misleads about storage, the CSP and what 'self' is.
  it('never say the page is served from file://', () => {
    const saying = readdirSync(RENDERER, { recursive: true, encoding: 'utf8' })
      .filter((name) => /\.tsx?$/.test(name))
      .filter((name) => readFileSync(join(RENDERER, name), 'utf8').includes('file://'));
    expect(saying).toEqual([]);
  });
});
