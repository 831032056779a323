import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  arkBlade,
  arkCheckChar,
  arkConfigProblems,
  BETANUMERIC,
  bladeLength,
  isTestArk,
  makeArk,
  MAX_PROTECTED_LENGTH,
  parseArk,
  randomBlade,
  sameArk,
  TEST_NAAN,
  TEST_SHOULDER,
} from '../../../shared/ark.js';
import type { ArkConfig } from '../../../shared/ark.js';

/** mulberry32: a small seeded generator, so the sample is the same on every run. */
function seeded(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    return Math.floor(unit * below);
  };
}

const testConfig: ArkConfig = { naan: TEST_NAAN, shoulder: TEST_SHOULDER };

/** An ARK that still parses and verifies after a change means the check missed the error. */
function undetected(mutated: string): boolean {
  const parsed = parseArk(mutated);
  return parsed.ok && parsed.checked;
}

describe('arkCheckChar', () => {
  it('matches the published NOID examples', () => {
    expect(arkCheckChar('13030/xf93gt2')).toBe('q');
    expect(arkCheckChar('13030/f54x54g1')).toBe('1');
  });

  it('uses the 29-character betanumeric alphabet', () => {
    expect(BETANUMERIC).toHaveLength(29);
    expect(new Set(BETANUMERIC).size).toBe(29);
  });
});

describe('minting', () => {
  it('gives ark:NAAN/shoulder+blade+check that parses as checked', () => {
    const ark = makeArk(testConfig, '0bc1df2g');
    expect(ark).toBe(`ark:99999/fk40bc1df2g${arkCheckChar('99999/fk40bc1df2g')}`);
    expect(parseArk(ark)).toEqual({
      ok: true,
      ark,
      naan: '99999',
      name: ark.slice('ark:99999/'.length),
      checked: true,
    });
  });

  it('sizes the blade to stay within the protected length', () => {
    expect(bladeLength(testConfig)).toBe(10);
    expect(bladeLength({ naan: '12345678901234', shoulder: 'b2' })).toBe(10);
    expect(bladeLength({ naan: '123456789012345', shoulder: 'b2' })).toBe(10);
    expect(bladeLength({ naan: '1234567890123456', shoulder: 'b2c' })).toBe(8);
    expect(bladeLength({ naan: '1234567890123456789', shoulder: 'b2' })).toBe(6);
  });

  it('draws blades from the alphabet through randomIndex', () => {
    expect(randomBlade(5, () => 0)).toBe('00000');
    expect(randomBlade(3, (below) => below - 1)).toBe('zzz');
    expect(() => randomBlade(3, () => 29)).toThrow(RangeError);
    expect(() => randomBlade(3, () => 0.5)).toThrow(RangeError);
  });

  it('refuses to mint from a bad config or blade', () => {
    expect(() => makeArk({ naan: '123', shoulder: 'fk4' }, 'bcd')).toThrow(/ark\.naan/);
    expect(() => makeArk(testConfig, 'abc')).toThrow(/betanumeric/);
    expect(() => makeArk(testConfig, '0'.repeat(20))).toThrow(/28/);
  });
});

describe('error detection over a generated sample', () => {
  const random = seeded(20240601);
  const configs: ArkConfig[] = [
    testConfig,
    { naan: '13030', shoulder: 'xf9' },
    { naan: '12345', shoulder: 'b2' },
    { naan: '987654', shoulder: 'z0' },
  ];
  const arks = Array.from({ length: 300 }, (_, n) => {
    const config = configs[n % configs.length];
    return makeArk(config, randomBlade(bladeLength(config), random));
  });

  it('mints ARKs that verify', () => {
    for (const ark of arks) expect(parseArk(ark)).toMatchObject({ ok: true, checked: true });
  });

  it('detects every single-character substitution', () => {
    let tried = 0;
    for (const ark of arks) {
      const text = ark.slice('ark:'.length);
      for (let i = 0; i < text.length; i++) {
        // Replacing the NAAN's "/" gives a string that is no longer an ARK at all.
        if (text[i] === '/') continue;
        for (const char of BETANUMERIC) {
          if (char === text[i]) continue;
          const mutated = `ark:${text.slice(0, i)}${char}${text.slice(i + 1)}`;
          tried++;
          if (undetected(mutated)) expect.fail(`substitution not detected: ${ark} -> ${mutated}`);
        }
      }
    }
    expect(tried).toBeGreaterThan(300 * 15 * 28);
  });

  it('detects every adjacent transposition of distinct characters', () => {
    let tried = 0;
    let slashZero = 0;
    for (const ark of arks) {
      const text = ark.slice('ark:'.length);
      for (let i = 0; i + 1 < text.length; i++) {
        if (text[i] === text[i + 1]) continue;
        // "/" and "0" both weigh 0 in the NOID sum, so swapping them is invisible to the check
        // (13030/0... vs 1303/00...): an inherent limit of the algorithm, not of this code.
        const pair = text[i] + text[i + 1];
        if (pair === '0/' || pair === '/0') {
          slashZero++;
          continue;
        }
        const mutated = `ark:${text.slice(0, i)}${text[i + 1]}${text[i]}${text.slice(i + 2)}`;
        tried++;
        if (undetected(mutated)) expect.fail(`transposition not detected: ${ark} -> ${mutated}`);
      }
    }
    expect(tried).toBeGreaterThan(300 * 10);
    // Only the 13030 config can put a "0" next to the "/"; the others never skip anything.
    expect(slashZero).toBeLessThanOrEqual(300 / 4);
  });

  it('keeps every sampled protected string within the guaranteed length', () => {
    for (const ark of arks) {
      expect(ark.length - 'ark:'.length - 1).toBeLessThanOrEqual(MAX_PROTECTED_LENGTH);
    }
  });
});

describe('parseArk', () => {
  it('accepts the older ark:/ label as the same identifier', () => {
    const parsed = parseArk('ark:/13030/xf93gt2q');
    expect(parsed).toEqual({
      ok: true,
      ark: 'ark:13030/xf93gt2q',
      naan: '13030',
      name: 'xf93gt2q',
      checked: true,
    });
    expect(sameArk('ark:/13030/xf93gt2q', 'ark:13030/xf93gt2q')).toBe(true);
    expect(sameArk('  ARK:/13030/xf93gt2q\n', 'ark:13030/xf93gt2q')).toBe(true);
  });

  it('reads hyphens as nothing, and a betanumeric name in capitals as the same name', () => {
    const minted = makeArk(testConfig, '0bc1df2g');
    const name = minted.slice('ark:99999/'.length);
    const hyphenated = `ark:99999/${name.slice(0, 3)}-${name.slice(3, 7)}-${name.slice(7)}`;
    for (const written of [hyphenated, minted.toUpperCase(), `ARK:/99999/${name.toUpperCase()}`]) {
      expect(parseArk(written)).toMatchObject({ ok: true, ark: minted, name, checked: true });
      expect(sameArk(written, minted)).toBe(true);
    }
    // A name that is not betanumeric keeps its case: ARKs in general tell it apart.
    expect(parseArk('ark:13030/Sample-A1')).toMatchObject({ ok: true, name: 'SampleA1' });
    expect(parseArk('ark:13030/-')).toMatchObject({ ok: false });
  });

  it('reports an unverified check character without rejecting the ARK', () => {
    expect(parseArk('ark:13030/xf93gt2r')).toMatchObject({ ok: true, checked: false });
    expect(parseArk('ark:13030/x')).toMatchObject({ ok: true, checked: false });
  });

  it('rejects what is not an ARK', () => {
    for (const text of [
      '',
      'ark:',
      'ark:13030',
      'ark:13030/',
      'doi:10.1/x',
      'ark:1a/x',
      'ark:13030/a b',
    ]) {
      expect(parseArk(text)).toMatchObject({ ok: false });
    }
    expect(sameArk('ark:13030/xf93gt2q', 'nonsense')).toBe(false);
    expect(sameArk('ark:13030/xf93gt2q', 'ark:13030/xf93gt2r')).toBe(false);
  });

  it('never throws, whatever the input', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string(),
          fc.string({ unit: 'binary' }),
          fc.string().map((s) => `ark:${s}`),
        ),
        (text) => {
          const parsed = parseArk(text);
          expect(typeof parsed.ok).toBe('boolean');
        },
      ),
      { numRuns: 2000 },
    );
  });
});

describe('arkBlade', () => {
  it('gives back the blade a minted ARK was made with, without shoulder and check', () => {
    const random = seeded(7);
    for (const config of [
      testConfig,
      { naan: '12345', shoulder: 'b2' },
      { naan: '12345', shoulder: 'bcd' },
    ]) {
      for (let i = 0; i < 50; i += 1) {
        const blade = randomBlade(bladeLength(config), random);
        const ark = makeArk(config, blade);
        expect(arkBlade(ark, config.shoulder)).toBe(blade);
        expect(arkBlade(ark.replace('ark:', 'ark:/'), config.shoulder)).toBe(blade);
      }
    }
  });

  it('finds the blade of an ARK minted under an earlier shoulder', () => {
    // [minted under, the station's shoulder now]: prefixes, extensions, digits anywhere.
    const changes = [
      ['fk4x', 'fk4'],
      ['fk4', 'fk4x'],
      ['fk4', 'fk'],
      ['bcd', 'fk4'],
      ['b2c', 'fk4'],
      ['12', 'fk4'],
    ];
    const random = seeded(11);
    for (const [then, now] of changes) {
      for (let i = 0; i < 30; i += 1) {
        const config = { naan: TEST_NAAN, shoulder: then };
        const blade = randomBlade(bladeLength(config), random);
        expect(arkBlade(makeArk(config, blade), now)).toBe(blade);
      }
    }
  });

  it('needs the shoulder only where NAAN/shoulder leaves less than a full blade', () => {
    const config = { naan: '123456789012', shoulder: 'bcdfghjkm' }; // 22 + 6 = 28
    const ark = makeArk(config, 'x7k9qz');
    expect(arkBlade(ark, 'bcdfghjkm')).toBe('x7k9qz');
    expect(arkBlade(ark, 'fk4')).toBeNull();
    expect(arkBlade(ark, 'bcdf')).toBeNull(); // would leave 11 characters: no minted blade
    expect(arkBlade(ark)).toBeNull();
  });

  it('is null for what is not an ARK or has no blade', () => {
    expect(arkBlade('not an ark', 'fk4')).toBeNull();
    expect(arkBlade('ark:99999/fk4x', 'fk4')).toBeNull();
  });
});

describe('test identifiers', () => {
  it('recognizes NAAN 99999 in ARKs and configs', () => {
    expect(isTestArk(testConfig)).toBe(true);
    expect(isTestArk({ naan: '13030', shoulder: 'fk4' })).toBe(false);
    expect(isTestArk(makeArk(testConfig, 'bcdfgh'))).toBe(true);
    expect(isTestArk('ark:/99999/fk4x')).toBe(true);
    expect(isTestArk('ark:13030/xf93gt2q')).toBe(false);
    expect(isTestArk('not an ark')).toBe(false);
  });
});

describe('arkConfigProblems', () => {
  it('accepts the test config', () => {
    expect(arkConfigProblems(testConfig)).toEqual([]);
  });

  it('names the field and the rule', () => {
    expect(arkConfigProblems({ naan: '1234', shoulder: 'fk4' })).toEqual([
      'ark.naan: must be 5 or more digits',
    ]);
    expect(arkConfigProblems({ naan: '12a45', shoulder: '' })).toEqual([
      'ark.naan: must be 5 or more digits',
      'ark.shoulder: must be 1 to 10 betanumeric characters (0-9 bcdfghjkmnpqrstvwxz)',
    ]);
    for (const shoulder of ['fk4a', 'FK4', 'b'.repeat(11), 'fk/4']) {
      expect(arkConfigProblems({ naan: '12345', shoulder })).toEqual([
        'ark.shoulder: must be 1 to 10 betanumeric characters (0-9 bcdfghjkmnpqrstvwxz)',
      ]);
    }
  });

  it('rejects a NAAN/shoulder that leaves no room for a 6-character blade', () => {
    // 12 + 1 + 9 = 22 leaves exactly 6; one more character does not.
    expect(arkConfigProblems({ naan: '123456789012', shoulder: 'bcdfghjkm' })).toEqual([]);
    const problems = arkConfigProblems({ naan: '1234567890123', shoulder: 'bcdfghjkm' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ark\.shoulder: .*23 characters.*at most 22/);
    // A NAAN so long that no shoulder fits beside it is the field named.
    expect(arkConfigProblems({ naan: '9'.repeat(40), shoulder: 'b' })[0]).toMatch(
      /^ark\.naan: .*42 characters.*at most 22/,
    );
    expect(arkConfigProblems({ naan: '9'.repeat(20), shoulder: 'b' })).toEqual([]);
    expect(arkConfigProblems({ naan: '9'.repeat(21), shoulder: 'b' })[0]).toMatch(/^ark\.naan: /);
    expect(arkConfigProblems({ naan: '9'.repeat(19), shoulder: 'bcd' })[0]).toMatch(
      /^ark\.shoulder: /,
    );
  });
});
