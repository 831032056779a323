/**
 * The field builder's form as the draft it adds: options and units are typed one per line, as
 * the dialog's labels say.
 */
import { describe, expect, it } from 'vitest';
import {
  EMPTY_BUILDER_FORM,
  defaultUnit,
  draftFromForm,
} from '../../../renderer/src/features/notebook/builderRules.js';

describe('draftFromForm', () => {
  it('keeps a comma inside an option or a unit (one per line)', () => {
    const select = draftFromForm({
      ...EMPTY_BUILDER_FORM,
      name: 'Solvent',
      type: 'select',
      options: 'N,N-Dimethylformamide\n  Water \r\n\nYes, degassed',
      value: 'N,N-Dimethylformamide',
    });
    expect(select.options).toEqual(['N,N-Dimethylformamide', 'Water', 'Yes, degassed']);
    expect(select.value).toBe('N,N-Dimethylformamide');
    const number = draftFromForm({
      ...EMPTY_BUILDER_FORM,
      name: 'Dose',
      type: 'number',
      units: 'e/Å²\nkg m/s²,net',
      unit: 'kg m/s²,net',
    });
    expect(number.units).toEqual(['e/Å²', 'kg m/s²,net']);
    expect(number.unit).toBe('kg m/s²,net');
  });

  it('keeps the default unit chosen when the units are then written in the other Unicode form', () => {
    const MICRO = '\u00b5';
    const MU = '\u03bc';
    // "µm" (micro sign) chosen, then the list edited to "μm" (Greek mu): the same unit, which the
    // dropdown shows selected and the draft gets as listed.
    const form = { ...EMPTY_BUILDER_FORM, name: 'Length', type: 'number' as const };
    const draft = draftFromForm({ ...form, units: `nm\n${MU}m`, unit: `${MICRO}m` });
    expect(draft.units).toEqual(['nm', `${MU}m`]);
    expect(draft.unit).toBe(`${MU}m`);
    expect(defaultUnit(['nm', `${MU}m`], `${MICRO}m`)).toBe(`${MU}m`);
    expect(defaultUnit(['nm', `${MU}m`], '')).toBe('');
    // Another unit is none of them: no default unit, as before.
    expect(draftFromForm({ ...form, units: 'mg\ng', unit: 'Mg' }).unit).toBeUndefined();
    expect(defaultUnit(['mg', 'g'], 'Mg')).toBe('');
  });
});
